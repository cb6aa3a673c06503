"""What a person sees: HTML tables and plotly figures."""
