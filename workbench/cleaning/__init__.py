"""Apply annotations to the gold set: the before/after scores and the cleaned export."""
