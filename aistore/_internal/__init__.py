"""Private machinery of the SDK: transport, retries, error mapping, wire codecs.

Nothing here is public API; names may change in any release.
"""
