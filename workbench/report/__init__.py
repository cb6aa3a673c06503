"""Reports: the papermill runner and the batch of reports a schedule runs."""
