"""Remote environments (`environments[].kind: "remote"`, `url`): an environment served over HTTP,
called for reset/step with many sessions at once. protocol.py is the wire format, client.py the
runtime's caller (timeouts, validation), environment.py the `Environment` that proxies to it,
server.py the reference server (`python -m troupe.envserver module:Class`)."""
