"""Human renderings of records (rich is imported only inside these modules' functions)."""
