"""Neural building blocks: attention, positional encodings, encoders and decoders."""
