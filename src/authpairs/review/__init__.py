"""Review: interfaces render a public case, a backend answers, a strict parser decides."""
