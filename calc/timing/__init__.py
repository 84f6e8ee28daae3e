"""Time: operators at their roofline, step time, the closed-loop serving model, frontiers, schedules."""
