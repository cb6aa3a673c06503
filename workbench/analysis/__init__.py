"""Measures over graded turns: metrics, slices, features, the error taxonomy, statistics, system comparison, changes between runs, text metrics."""
