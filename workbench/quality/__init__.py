"""Data-quality checks on the gold turns (missing values, unit and sign inconsistency, mislabels)."""
