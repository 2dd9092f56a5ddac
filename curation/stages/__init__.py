"""One module per DVC stage: ``run(params, benchmark)`` reads, computes, writes atomically.

``pipelines/<stage>.py`` and ``curate <stage>`` both call these, so a stage behaves the
same inside and outside DVC.
"""
