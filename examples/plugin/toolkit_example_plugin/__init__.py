"""An example toolkit plugin: registers the ``arc_eager`` transition system and the ``postorder`` tree codec.

Importing the package registers both; the toolkit imports it through the ``toolkit.plugins`` entry
point in ``setup.cfg`` the first time a config names one of them.
"""

from toolkit_example_plugin.arc_eager import ArcEager
from toolkit_example_plugin.postorder import PostorderCodec

__all__ = ["ArcEager", "PostorderCodec"]
