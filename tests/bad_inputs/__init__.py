"""The cases of ``tests/test_bad_inputs.py``, one module per kind of bad input, and the machinery they share."""
