"""Entry point: page config, navigation and the shared sidebar. The page list is
ui.shell.PAGES; the frame is ui.shell.run."""

from ui.shell import run

run()
