"""An example toolkit plugin: registers the ``arc_eager`` and ``covington`` transition systems and the ``postorder`` tree codec.

Importing the package registers all three; the toolkit imports it through the ``toolkit.plugins``
entry point in ``setup.cfg`` the first time a config names one of them.
"""

from toolkit_example_plugin.arc_eager import ArcEager
from toolkit_example_plugin.covington import Covington
from toolkit_example_plugin.postorder import PostorderCodec

__all__ = ["ArcEager", "Covington", "PostorderCodec"]
