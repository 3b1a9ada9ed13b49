#!/usr/bin/env python3
"""Small network tools for the NAT scenario (tests/netns/scenarios/nat.sh), stdlib only.

    nat_tools.py read SOCKET HANDLER          a read handler's value through a ControlSocket
    nat_tools.py udp-echo ADDR PORT LOG       UDP echo server; logs "PEER_ADDR PEER_PORT" lines
    nat_tools.py udp-ask ADDR PORT SPORT MSG [COUNT [INTERVAL]]
                                              COUNT requests from local port SPORT, one reply
                                              each (2 s timeout); prints the replies, then
                                              when the last one came (ns since the epoch)
    nat_tools.py ftp-server ADDR ROOT LOG     a minimal active-mode FTP server on ADDR:21
    nat_tools.py ftp-client HOST LOCALDIR [SOURCE [DATAPORT]]
                                              active-mode session (ftplib, set_pasv(False)),
                                              from address SOURCE, data connections to
                                              ports DATAPORT, DATAPORT + 1, ... if given:
                                              stores up.bin, lists, retrieves down.bin twice

Every socket operation has a timeout, so nothing here can hang a test. Each process exits
on its own: the servers after being idle for a while (they are also killed by the harness).
"""

import ftplib
import os
import socket
import sys
import threading
import time

TIMEOUT = 10.0
SERVER_IDLE_EXIT = 120.0


def control_read(path, handler):
    """Reads HANDLER through a Click ControlSocket (code lines, `DATA N`, then N bytes)."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(TIMEOUT)
    s.connect(path)
    f = s.makefile("rb")
    f.readline()  # greeting: "Click::ControlSocket/1.3"
    s.sendall(f"READ {handler}\r\n".encode())
    line = f.readline().decode().rstrip("\r\n")
    while line[3:4] == "-":  # continuation lines of a multi-line answer
        line = f.readline().decode().rstrip("\r\n")
    if not line.startswith("200"):
        sys.stderr.write(f"READ {handler}: {line}\n")
        return 1
    data = f.readline().decode().split()
    n = int(data[1])
    body = f.read(n)
    s.sendall(b"QUIT\r\n")
    s.close()
    sys.stdout.write(body.decode())
    return 0


def udp_echo(addr, port, log):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind((addr, int(port)))
    s.settimeout(SERVER_IDLE_EXIT)
    with open(log, "a", buffering=1) as out:
        while True:
            try:
                data, peer = s.recvfrom(65535)
            except socket.timeout:
                return 0
            out.write(f"{peer[0]} {peer[1]}\n")
            s.sendto(b"echo " + data + f" seen-from {peer[0]} {peer[1]}".encode(), peer)


def udp_ask(addr, port, sport, msg, count="1", interval="0"):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("", int(sport)))
    s.settimeout(2.0)
    ok = 0
    for i in range(int(count)):
        if i:
            time.sleep(float(interval))
        s.sendto(f"{msg}-{i}".encode(), (addr, int(port)))
        try:
            data, peer = s.recvfrom(65535)
        except socket.timeout:
            print(f"no reply to {msg}-{i}")
            continue
        print(f"{peer[0]} {peer[1]} {data.decode()}")
        ok += 1
    print(f"last-reply-ns {time.time_ns()}")
    return 0 if ok == int(count) else 1


class FtpSession(threading.Thread):
    """One control connection of the active-mode FTP server.

    Like a careful real server, it refuses a PORT naming another address than the control
    connection's peer: through a NAT that only works when FTPPortMapper rewrote the command.
    Data connections are opened from port 20 (ftp-data), as FTPPortMapper expects."""

    def __init__(self, conn, peer, addr, root, log):
        super().__init__(daemon=True)
        self.conn, self.peer, self.addr, self.root, self.log = conn, peer, addr, root, log
        self.port_target = None

    def reply(self, text):
        self.conn.sendall((text + "\r\n").encode())

    def data_connection(self):
        d = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        d.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        d.settimeout(TIMEOUT)
        d.bind((self.addr, 20))
        d.connect(self.port_target)
        self.port_target = None
        return d

    def path(self, name):
        return os.path.join(self.root, os.path.basename(name))

    def command(self, verb, arg):
        if verb == "USER":
            self.reply("331 Password required.")
        elif verb == "PASS":
            self.reply("230 Logged in.")
        elif verb in ("TYPE", "MODE", "STRU"):
            self.reply(f"200 {verb} set to {arg}.")
        elif verb == "SYST":
            self.reply("215 UNIX Type: L8")
        elif verb == "PWD":
            self.reply('257 "/" is the current directory.')
        elif verb == "NOOP":
            self.reply("200 NOOP ok.")
        elif verb == "PORT":
            try:
                n = [int(x) for x in arg.split(",")]
                assert len(n) == 6 and all(0 <= x < 256 for x in n)
            except (ValueError, AssertionError):
                self.reply("501 Bad PORT argument.")
                return True
            host, port = ".".join(map(str, n[:4])), n[4] * 256 + n[5]
            if host != self.peer[0]:
                self.reply(f"501 PORT names {host}, not the client {self.peer[0]}.")
                return True
            self.port_target = (host, port)
            self.reply("200 PORT command successful.")
        elif verb in ("RETR", "STOR", "NLST", "LIST"):
            if self.port_target is None:
                self.reply("425 Use PORT first.")
                return True
            if verb == "RETR" and not os.path.isfile(self.path(arg)):
                self.reply("550 No such file.")
                return True
            self.reply("150 Opening data connection.")
            try:
                with self.data_connection() as d:
                    if verb == "RETR":
                        with open(self.path(arg), "rb") as f:
                            d.sendall(f.read())
                    elif verb == "STOR":
                        with open(self.path(arg), "wb") as f:
                            while chunk := d.recv(65536):
                                f.write(chunk)
                    else:
                        d.sendall("".join(n + "\r\n" for n in sorted(os.listdir(self.root))).encode())
            except OSError as e:
                self.reply(f"425 Data connection failed: {e}.")
                return True
            self.reply("226 Transfer complete.")
        elif verb == "QUIT":
            self.reply("221 Bye.")
            return False
        else:
            self.reply(f"502 {verb} not implemented.")
        return True

    def run(self):
        self.conn.settimeout(SERVER_IDLE_EXIT)
        f = self.conn.makefile("rb")
        try:
            self.reply("220 nat_tools active-mode FTP server ready.")
            while True:
                line = f.readline()
                if not line:
                    break
                line = line.decode(errors="replace").rstrip("\r\n")
                verb, _, arg = line.partition(" ")
                self.log.write(f"{self.peer[0]} {self.peer[1]} {line}\n")
                if not self.command(verb.upper(), arg.strip()):
                    break
        except OSError:
            pass
        finally:
            self.conn.close()


def ftp_server(addr, root, log):
    ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind((addr, 21))
    ls.listen(8)
    ls.settimeout(SERVER_IDLE_EXIT)
    with open(log, "a", buffering=1) as out:
        while True:
            try:
                conn, peer = ls.accept()
            except socket.timeout:
                return 0
            FtpSession(conn, peer, addr, root, out).start()


def ftp_client(host, localdir, source=None, dataport=None):
    ftp = ftplib.FTP(timeout=TIMEOUT)
    ftp.connect(host, 21, source_address=(source, 0) if source else None)
    if dataport:
        # Listen for the data connections on DATAPORT, DATAPORT + 1, ... instead of a port
        # the kernel picks, so that the PORT commands' lengths are known.
        ports = iter(range(int(dataport), int(dataport) + 100))

        def makeport():
            local = ftp.sock.getsockname()[0]
            listener = socket.create_server((local, next(ports)), backlog=1)
            listener.settimeout(TIMEOUT)
            ftp.sendport(local, listener.getsockname()[1])
            return listener

        ftp.makeport = makeport
    ftp.login("nat", "test")
    ftp.set_pasv(False)
    with open(os.path.join(localdir, "up.bin"), "rb") as f:
        print(ftp.storbinary("STOR up.bin", f))
    names = ftp.nlst()
    print("listing:", " ".join(names))
    for i in (1, 2):
        with open(os.path.join(localdir, f"down{i}.bin"), "wb") as f:
            print(ftp.retrbinary("RETR down.bin", f.write))
    print(ftp.quit())
    return 0


def main(argv):
    cmds = {
        "read": control_read,
        "udp-echo": udp_echo,
        "udp-ask": udp_ask,
        "ftp-server": ftp_server,
        "ftp-client": ftp_client,
    }
    if len(argv) < 2 or argv[1] not in cmds:
        sys.stderr.write(__doc__)
        return 2
    return cmds[argv[1]](*argv[2:])


if __name__ == "__main__":
    sys.exit(main(sys.argv))
