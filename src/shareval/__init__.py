"""shareval: run information-extraction and retrieval shared tasks end to end."""
__version__ = "0.1.0"
