#!/usr/bin/env python3
"""List nodes and run a command on them through clusterws, with Python's standard library.

    CLUSTERWS_PASSWORD=secret python3 clusterws_client.py \
        --url https://head:8443/clusterws --ca /var/lib/clusterws/pki/ca-cert.pem \
        --user root compute 'uptime'

The server is verified with the cluster CA; the password travels in an Authorization header
(HTTP Basic), never in the URL, and is read from the environment, never from the command line.
"""
import argparse
import base64
import json
import os
import ssl
import urllib.parse
import urllib.request


def call(ctx, url, auth, method="GET", body=None):
    """One request; returns the response, whose body may be read whole or line by line."""
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, method=method)
    req.add_header("Authorization", "Basic " + auth)
    if data is not None:
        req.add_header("Content-Type", "application/json")
    return urllib.request.urlopen(req, context=ctx, timeout=60)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--url", required=True, help="https://HOST:PORT/clusterws")
    p.add_argument("--ca", required=True, help="the cluster CA (<home>/pki/ca-cert.pem)")
    p.add_argument("--user", default="root")
    p.add_argument("noderange")
    p.add_argument("command")
    a = p.parse_args()

    ctx = ssl.create_default_context(cafile=a.ca)  # verifies the certificate and its name
    secret = a.user + ":" + os.environ["CLUSTERWS_PASSWORD"]
    auth = base64.b64encode(secret.encode()).decode()
    nr = urllib.parse.quote(a.noderange, safe=",")

    with call(ctx, f"{a.url}/nodes/{nr}/nodels", auth) as r:
        nodes = json.load(r)
    print("nodes:", " ".join(nodes))

    # stream=1: one JSON line per node as soon as it is done, then a summary line
    shell = f"{a.url}/nodes/{nr}/nodeshell?stream=1&timeout=60"
    with call(ctx, shell, auth, "POST", {"command": a.command}) as r:
        for line in r:
            result = json.loads(line)
            if "done" in result:
                print(f"done: {result.get('nodes')} nodes, {result.get('failed')} failed")
            elif result["rc"] == 0:
                for out in result["stdout"]:
                    print(f"{result['node']}: {out}")
            else:
                why = result.get("message") or f"exit status {result['rc']}"
                print(f"{result['node']}: FAILED: {why}")


if __name__ == "__main__":
    main()
