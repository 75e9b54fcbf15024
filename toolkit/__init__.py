"""A toolkit of grammar-driven neural parsers built from jsonnet configs."""
