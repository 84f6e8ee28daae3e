"""The reverse question: which deployment (GPU, TP, precisions, max_num_seqs, replicas) serves a
request rate within an SLA, and at what cost (:mod:`calc.plan.search`)."""
