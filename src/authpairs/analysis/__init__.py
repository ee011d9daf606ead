"""Analysis: reads run records only, never calls a model."""
