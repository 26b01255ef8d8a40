"""A local web GUI: ``fantasista-gui`` serves a page on 127.0.0.1 to play every variant in a browser, against our
engine, the USI engines the server was started with (chosen by name), or a second person at the same screen; one
game per browser tab. See ``docs/gui.md``."""
