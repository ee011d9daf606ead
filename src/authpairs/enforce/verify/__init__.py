"""Independent verifiers: one class per effect type (the built-ins in :mod:`.built_in`), reading
back through their own channel (:class:`~authpairs.enforce.verify.channel.ReadChannel`), plus
the unrelated-resource digest.

No module in this package imports :mod:`authpairs.enforce.execute`.
"""
