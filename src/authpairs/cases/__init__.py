"""The case contract: typed models, canonical hashing, the public view and dataset loading."""
