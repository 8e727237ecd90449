"""The stack from ``template.yaml``, created in process on moto (tests, the CLI, ``make demo``).

Never imported by a Lambda handler: it needs the development dependencies (moto, PyYAML).
"""
