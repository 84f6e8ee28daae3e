"""What is served: units, precisions, validated inputs, the model and GPU catalogs, parameter counts."""
