"""The DVC stages: ``dvc.yaml`` runs ``python pipelines/<stage>.py``; each file is that
stage's code (read its params section, call the library, validate, write its outs)."""
