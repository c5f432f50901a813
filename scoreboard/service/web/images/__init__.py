"""The boards and the roads as PNG images for screens that cannot run a browser (docs/signage.md): the routes and their
fast path (`answers`), drawn in child processes whose line is shared fairly between clients (`shares`)."""
