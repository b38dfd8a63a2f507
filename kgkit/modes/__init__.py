"""View modes, one file each, found through ``registry`` by versioned name ("nary.v1").

``base`` holds what modes share with the engine (the skeleton, the per-chunk scope,
evidence checks, role filling); ``upgrade`` the shape of a one-pass-per-chunk mode.
"""
