"""The stack from ``template.yaml``, created in process on moto (tests, the CLI, ``make demo``):
SAM's translation, created by moto's own CloudFormation (:mod:`.stack`, :mod:`.shims`).

Never imported by a Lambda handler: it needs the development dependencies (moto, SAM). It
may import the runtime package (to run the functions in process), never the simulation or the
CLI (the local stand-in for ``sam local``, which runs the simulation on it, is
``simulation.standin``).
"""
