"""``hyperpod-ha configure``'s parts: the template's deploy parameters and their checks, where a
cluster's values are found (SageMaker, S3, CloudFormation, FSx), and the samconfig environment
written from them. Imports the runtime package's errors and nothing of the other tools but the
template reader."""
