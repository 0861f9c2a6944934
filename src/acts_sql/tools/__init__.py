"""The five tools of the Central Agent, one module each, in one registry."""
