"""Independent verifiers: one module per effect type, reading back through their own channel
(:class:`~authpairs.enforce.verify.channel.ReadChannel`), plus the unrelated-resource digest.

No module in this package imports :mod:`authpairs.enforce.execute`.
"""
