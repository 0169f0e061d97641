"""The browser view: a page the daemon serves on its port, speaking protocol v1 over its WebSocket.

:mod:`.gate` checks every request (login links, the session cookie, Host and Origin) and serves the
page's files from ``static/`` (plain ES modules and CSS shipped in the package: no build step, no
CDN). :mod:`.command` is ``foreman web``: it prints (and opens) a one-time login link.
"""
