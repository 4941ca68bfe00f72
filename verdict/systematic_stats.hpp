// Tail probabilities for the systematic-error checks (verdict/systematic.hpp), in log space so that the
// astronomically small p-values of a real defect (a dead channel: chi-square values of 10^6) stay finite, and the
// conversion of such a tail probability to the z-score of a standard normal with the same upper tail.
#pragma once

namespace moe {

// log P(X > x) for X ~ chi-square with `dof` degrees of freedom (x >= 0, dof > 0): the regularized upper incomplete
// gamma function Q(dof / 2, x / 2), by its power series below a + 1 and by its continued fraction above.
double log_chi2_sf(double x, double dof);

// The z with P(N(0, 1) > z) = exp(log_p), log_p <= 0: erfc where it is representable, the asymptotic expansion of
// the normal tail beyond (so a p-value of 10^-100000 gives z ~ 678, never Inf).
double z_from_log_sf(double log_p);

// log P(N(0, 1) > z).
double log_normal_sf(double z);

// The largest |z| of m two-sided tests, corrected for their number (Sidak): the signed z whose two-sided normal
// probability is 1 - (1 - p)^m for p = P(|N(0, 1)| > |z|), so that the max over m null tests passes the corrected z's
// threshold as often as one test passes it. m <= 1 and a NaN z return z; the correction never makes |z| negative.
double multiplicity_z(double z, double m);

// The same for m one-sided tests of the upper tail (`channel`): the z with P(N > z) = 1 - (1 - P(N > z1))^m.
double multiplicity_z_upper(double z, double m);

// The single test's threshold that multiplicity_z (two-sided) or multiplicity_z_upper (one-sided) maps to
// `threshold`: a component passes `threshold` after the correction exactly when its own z passes this.
double single_z_threshold(double threshold, double m, bool one_sided);

}  // namespace moe
