"""A local web GUI: ``fantasista-gui`` serves a page on 127.0.0.1 to play every variant in a browser, against our
engine, any USI engine, or a second person at the same screen. See ``docs/gui.md``."""
