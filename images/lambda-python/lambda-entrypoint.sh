#!/bin/sh
# `docker run IMAGE app.lambda_handler`, as with AWS's images: under the Runtime Interface
# Emulator when one is in the image (sam local adds it at /var/rapid), else straight to bootstrap.
if [ $# -ne 1 ]; then
  echo "entrypoint requires the handler name to be the first argument" 1>&2
  exit 142
fi
export _HANDLER="$1"
if [ -z "${AWS_LAMBDA_RUNTIME_API}" ] && [ -x /var/rapid/aws-lambda-rie ]; then
  exec /var/rapid/aws-lambda-rie /var/runtime/bootstrap
fi
exec /var/runtime/bootstrap
