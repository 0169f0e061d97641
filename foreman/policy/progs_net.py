"""Network tools, remote shells, cloud CLIs, and process, system and GUI programs."""

from __future__ import annotations

import re
from urllib.parse import urlsplit

from .opts import lit_text, parse_opts
from .registry import Call, handles
from .walker import probe_text
from .words import LIT, UNKNOWN, Arg


# ---- network ------------------------------------------------------------------------------
def _url_host(text: str) -> str | None:
    if "://" not in text:
        text = "http://" + text
    try:
        host = urlsplit(text).hostname
    except ValueError:
        return None
    return host or None


@handles("curl", "wget", "http", "https", "xh", "aria2c")
def _curl(c: Call):
    p = parse_opts(c.args, "oOTdKeEHAuxXwmrYyzbcDFPQtFiUC" if c.name == "curl" else "OoPiaUeTt",
                   {"--output", "--upload-file", "--data", "--data-binary", "--data-raw", "--data-urlencode",
                    "--config", "--header", "--user-agent", "--user", "--proxy", "--request", "--write-out",
                    "--max-time", "--retry", "--cookie", "--cookie-jar", "--form", "--output-document",
                    "--directory-prefix", "--input-file", "--output-dir", "--referer", "--cert", "--key",
                    "--cacert", "--connect-timeout", "--limit-rate", "--range", "--stderr", "--trace",
                    "--trace-ascii", "--dump-header", "--post-data", "--post-file", "--body-file"})
    if p.has("-K", "--config", "-e" if c.name == "wget" else "--execute", "--execute"):
        c.exact(f"{c.name} reads options from a config file or runs commands")
    for f, v in p.opts:
        if v is None:
            continue
        if f in ("-o", "--output", "--output-document", "-O") and (c.name != "curl" or f != "-O"):
            if lit_text(v) != "-":
                c.write(v)
        elif f in ("-D", "--dump-header", "-c", "--cookie-jar", "--trace", "--trace-ascii", "--stderr"):
            if lit_text(v) not in ("-", None) or v.kind != LIT:
                c.write(v)
        elif f in ("-P", "--directory-prefix", "--output-dir"):
            c.write(v, tree=True)
        elif f in ("-T", "--upload-file", "-i", "--input-file", "--post-file", "--body-file", "--cert", "--key", "--cacert"):
            c.read(v)
        elif f in ("-d", "--data", "--data-binary", "--data-urlencode", "-F", "--form", "-b", "--cookie"):
            t = lit_text(v)
            if t is None and ("@" in v.src or "<" in v.src):  # @$FILE: a file read that cannot be checked
                c.read(Arg(UNKNOWN, None, False, re.split(r"[@<]", v.src, maxsplit=1)[1].split(";")[0]))
            elif t and ("@" in t[:1] or "=@" in t or "=<" in t):
                c.read(Arg(LIT, t.split("@", 1)[1].split(";")[0] if "@" in t else t.split("<", 1)[1], False, t))
    if c.name == "curl" and p.has("-O", "--remote-name", "--remote-name-all", "-J"):
        c.write(Arg.lit("."))
    if c.name == "wget" and not p.values("-O", "--output-document") and not p.has("--spider"):
        c.write(Arg.lit("."))
    hosts: list[str] = []
    for a in p.operands:
        t = lit_text(a)
        if t is None:
            c.exact(f"{c.name} contacts a URL from a variable")
            continue
        if c.name in ("http", "https", "xh") and ("=" in t or ":" in t and "://" not in t and not t.startswith(":")) and hosts:
            continue
        if c.name in ("http", "https", "xh") and t.upper() in ("GET", "POST", "PUT", "DELETE", "PATCH", "HEAD"):
            continue
        host = _url_host(t)
        if host is None:
            c.exact(f"{c.name} contacts a URL that cannot be read")
        else:
            hosts.append(host)
    for h in dict.fromkeys(hosts):
        c.ctx.ask(f"Bash:net:{c.name}:{h}", f"{c.name} uses the network ({h})", network=True)
    if not hosts and not p.operands:
        c.exact(f"{c.name} without a URL")
    return None


@handles("ssh", "mosh")
def _ssh(c: Call):
    p = parse_opts(c.args, "bcDEeFIiJLlmOopQRSWw", set(), stop_at_operand=True)
    if p.has("-o", "-F", "-J", "-L", "-R", "-D", "-W", "-w", "-S"):
        c.exact(f"{c.name} options change proxies, tunnels or config")
    if not p.rest:
        c.exact(f"{c.name} without a host")
        return None
    host = lit_text(p.rest[0])
    if host is None:
        c.exact(f"{c.name} to a host from a variable")
        return None
    host = host.rsplit("@", 1)[-1]
    c.ctx.ask(f"Bash:net:{c.name}:{host}", f"{c.name} connects to {host}", network=True)
    remote = p.rest[1:]
    if remote and all(a.kind == LIT for a in remote):
        probe_text(c.ctx, " ".join(a.value for a in remote), None, f"a command run on {host}")
    elif remote:
        c.exact(f"{c.name} runs a remote command built from variables")
    return None


@handles("scp", "rsync", "sftp")
def _scp(c: Call):
    p = parse_opts(c.args, "PiFocSlJe" if c.name != "rsync" else "eBfT",
                   {"--rsh", "--exclude", "--include", "--filter", "--exclude-from", "--include-from", "--files-from",
                    "--rsync-path", "--temp-dir", "--partial-dir", "--backup-dir", "--log-file", "--password-file"})
    if p.has("-e", "--rsh", "--rsync-path", "-S", "-F", "-o", "-J"):
        c.exact(f"{c.name} runs a remote shell or program given on the command line")
    ops = p.operands
    for idx, a in enumerate(ops):
        t = lit_text(a)
        if t is None:
            if idx < len(ops) - 1 or len(ops) == 1:  # a source: key material is refused
                c.read(a, tree=True)
            else:
                c.exact(f"{c.name} copies a path from a variable")
            continue
        if ":" in t and not t.startswith("/") and not t.startswith("."):
            host = t.split(":", 1)[0].rsplit("@", 1)[-1]
            c.ctx.ask(f"Bash:net:{c.name}:{host}", f"{c.name} copies files over the network ({host})", network=True)
        elif idx == len(ops) - 1 and len(ops) > 1:
            c.write(a, tree=True)
        else:
            c.read(a, tree=True)
    if c.name == "rsync" and p.has("--delete", "--remove-source-files"):
        c.action("rsync --delete", "rsync --delete deletes files")
    return None


@handles("nc", "ncat", "netcat", "telnet", "ftp", "socat", "ping", "dig", "nslookup", "host", "traceroute",
         "whois", "gh", "glab", "hub", "aws", "gcloud", "az", "docker", "podman", "kubectl", "helm", "terraform",
         "heroku", "vercel", "netlify", "fly", "flyctl")
def _net_tool(c: Call):
    if c.name in ("gh", "glab", "hub", "docker", "podman", "kubectl", "aws", "gcloud", "az", "helm", "terraform",
                  "heroku", "vercel", "netlify", "fly", "flyctl"):
        picked = [lit_text(a) for a in c.args if not (lit_text(a) or "-").startswith("-")][:2]
        words = [w for w in picked if w is not None]
        if len(words) < len(picked) or not words:
            c.exact(f"{c.name} runs a subcommand that cannot be checked")
            return None
        if c.name in ("gh", "glab", "hub") and words[:1] == ["api"]:
            c.exact(f"{c.name} api can call any endpoint")
            return None
        if c.name in ("gh", "glab", "hub") and len(words) > 1 and words[1] in ("push",) or "push" in words and c.name in ("hub",):
            c.deny(f"{c.name} pushes")
            return None
        c.ctx.ask(f"Bash:net:{c.name}:{' '.join(words)}", f"{c.name} {' '.join(words)} uses the network or services", network=True)
        return None
    hosts = [lit_text(a) for a in c.args if not (lit_text(a) or "-").startswith("-")]
    if not hosts or hosts[0] is None:
        c.exact(f"{c.name} contacts a host that cannot be checked")
        return None
    c.ctx.ask(f"Bash:net:{c.name}:{hosts[0]}", f"{c.name} uses the network ({hosts[0]})", network=True)
    return None


# ---- process, system and GUI programs ----------------------------------------------------
_SYSTEM = ("kill", "pkill", "killall", "systemctl", "service", "shutdown", "reboot", "halt", "poweroff",
           "mount", "umount", "crontab", "launchctl", "taskkill", "reg", "sc", "iptables", "ufw",
           "useradd", "usermod", "userdel", "passwd", "modprobe", "insmod", "rmmod", "sysctl", "renice", "disown",
           "apt", "apt-get", "dpkg", "yum", "dnf", "pacman", "brew", "snap", "flatpak", "port", "choco", "winget",
           "schtasks", "wmic", "netsh", "diskutil", "mkfs", "fdisk", "parted", "losetup", "ip", "ifconfig", "route",
           "nmcli", "defaults", "pmset", "scutil", "setcap", "chattr", "xattr", "journalctl", "dmesg", "loginctl",
           "newgrp", "sg", "visudo", "update-alternatives", "ldconfig", "tmux", "screen",
           "xdotool", "xclip", "xsel", "pbcopy", "pbpaste", "wl-copy", "notify-send", "osascript_gui", "ssh-add",
           "ssh-keygen", "gpg", "gpg2", "gpg-agent", "security", "keyctl", "pass", "op", "openssl")
_GUI = ("xdg-open", "open", "gio", "firefox", "chromium", "chromium-browser", "google-chrome", "chrome", "code",
        "code-insiders", "subl", "gedit", "nautilus", "x-www-browser", "sensible-browser", "start", "explorer",
        "vim", "vi", "nvim", "nano", "emacs", "pico", "micro", "kate", "idea", "pycharm", "atom", "zed", "cursor",
        "safari", "msedge", "xterm", "gnome-terminal", "konsole", "meld", "kdiff3", "gitg", "tig", "lazygit",
        "top", "htop", "btop", "man", "info", "w3m", "lynx", "links")


@handles(*_SYSTEM)
def _system(c: Call):
    c.exact(f"{c.name} manages processes, users, packages or the system")
    c.mutate(c.name)


@handles(*_GUI)
def _gui(c: Call):
    c.exact(f"{c.name} starts an interactive program, a GUI or a browser")
