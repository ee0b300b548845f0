#!/usr/bin/env python3
"""record.py -- records what clients send a cudarem server, as seeds for fuzz_request.

    record.py LISTEN_SOCKET SERVER_SOCKET OUTDIR

Listens on the Unix socket LISTEN_SOCKET, relays every connection to the server's
Unix socket SERVER_SOCKET and writes the bytes each client sent into
OUTDIR/conn-N.bin. Run the programs with CUDAREM_SERVER=unix:LISTEN_SOCKET,
CUDAREM_CHANNEL=off and CUDAREM_SHM=off, so that every byte of the session,
bulk data included, travels on the one recorded connection. Stops on SIGINT.
"""
import os
import socket
import sys
import threading


def pump(src, dst, log):
    while True:
        try:
            data = src.recv(65536)
        except OSError:
            data = b""
        if not data:
            break
        if log is not None:
            log.write(data)
        try:
            dst.sendall(data)
        except OSError:
            break
    try:
        dst.shutdown(socket.SHUT_WR)
    except OSError:
        pass


def serve(client, server_path, path):
    upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    upstream.connect(server_path)
    with open(path, "wb") as log:
        back = threading.Thread(target=pump, args=(upstream, client, None))
        back.start()
        pump(client, upstream, log)
        back.join()
    client.close()
    upstream.close()


def main():
    listen_path, server_path, outdir = sys.argv[1:4]
    os.makedirs(outdir, exist_ok=True)
    lsock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    lsock.bind(listen_path)
    lsock.listen(16)
    n = 0
    try:
        while True:
            client, _ = lsock.accept()
            n += 1
            path = os.path.join(outdir, "conn-%d.bin" % n)
            threading.Thread(target=serve, args=(client, server_path, path), daemon=True).start()
    except KeyboardInterrupt:
        pass
    finally:
        os.unlink(listen_path)


if __name__ == "__main__":
    main()
