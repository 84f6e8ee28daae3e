"""Performance views: roofline, frontier and scheduler controls, figures, panels, translations."""
