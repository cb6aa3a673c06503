"""Grade a run: load, grade (locally or on Dask), and the graded folder with its manifest."""
