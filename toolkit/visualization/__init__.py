"""``toolkit visualize``: pictures of what a trained model does with a sentence.

- :mod:`~toolkit.visualization.recording`: capture attention probabilities during one forward pass;
- :mod:`~toolkit.visualization.trace`: decode a sentence and keep its symbols, parser states and attention;
- :mod:`~toolkit.visualization.heatmaps`: attention as heatmaps (encoder self-attention, cross-attention);
- :mod:`~toolkit.visualization.stack_buffer`: which tokens a transition parser holds at each action;
- :mod:`~toolkit.visualization.structures`: the predicted graph or logical form as a file;
- :mod:`~toolkit.visualization.fonts`: fonts with the labels' characters, whatever their script;
- :mod:`~toolkit.visualization.svg`: predicted structures as SVG markup, with no plotting library (``toolkit serve``'s page);
- :mod:`~toolkit.visualization.command`: all of it for the sentences of an input file.

Plotting needs the ``viz`` extra (matplotlib, graphviz); importing this package does not.
"""
