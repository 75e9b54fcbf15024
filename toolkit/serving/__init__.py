"""``toolkit serve``: any archive behind an HTTP JSON API, with a page that draws the parse.

- :mod:`~toolkit.serving.batcher`: requests that arrive together are decoded together;
- :mod:`~toolkit.serving.app`: the endpoints, their limits and their errors;
- :mod:`~toolkit.serving.drawing`: the picture for a prediction (:mod:`toolkit.visualization.svg`);
- :mod:`~toolkit.serving.server`: load the archive and run it under uvicorn.

Needs the ``serve`` extra (Starlette, uvicorn); importing this package does not.
"""
