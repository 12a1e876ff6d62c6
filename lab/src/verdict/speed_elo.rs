//! The exchange rate between speed and strength: Elo per doubling of thinking time, fitted from
//! time-odds self-play, and what a measured speed change is worth under it. No formatting.
//!
//! The model is `Elo = k · log2(odds)`: a line through the origin (equal time is equal
//! strength in self-play), fitted by weighted least squares with each point weighted by the
//! inverse variance of its match's Elo, so `k = Σ wxy / Σ wx²` and `Var(k) = 1 / Σ wx²`.
//!
//! A speed change of ratio `r` (B's nodes per second over A's) gives B `r` times the nodes in
//! the same time, as if it had `r` times the time: it is worth `k · log2(r)` Elo. Its interval
//! is the range of `k · log2(r)` over the box of both 95% intervals (k's and r's): wider than
//! the delta method, never narrower, since two independent uncertainties are combined.

use serde::{Deserialize, Serialize};

use crate::games::sprt::{Estimate, Z_95};

/// One time-odds match: B had `odds` times A's clock.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct OddsPoint {
    pub odds: f64,
    /// B's logistic Elo over A, with its 95% interval.
    pub elo: Estimate,
    pub games: u64,
}

impl OddsPoint {
    /// The variance of the Elo estimate, read back from its (asymmetric) 95% interval.
    fn variance(&self) -> Option<f64> {
        let half_width = (self.elo.ci_high - self.elo.ci_low) / 2.0;
        let sd = half_width / Z_95;
        (sd.is_finite() && sd > 0.0).then_some(sd * sd)
    }
}

/// Why a set of points gives no model.
#[derive(Debug, Clone, PartialEq)]
pub enum FitError {
    /// No point with odds other than 1 and a positive, finite variance.
    NoUsablePoint,
    /// A point's odds are not a finite number above 0.
    BadOdds(f64),
}

/// Elo per doubling of time with its 95% interval, and the points it was fitted on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EloPerDoubling {
    pub(crate) value: f64,
    pub(crate) ci_low: f64,
    pub(crate) ci_high: f64,
    pub(crate) points: Vec<OddsPoint>,
}

/// Fits `Elo = k · log2(odds)` through the origin, each point weighted by its inverse variance.
pub fn fit(points: &[OddsPoint]) -> Result<EloPerDoubling, FitError> {
    let mut weighted_xx = 0.0;
    let mut weighted_xy = 0.0;
    for point in points {
        if !(point.odds.is_finite() && point.odds > 0.0) {
            return Err(FitError::BadOdds(point.odds));
        }
        let x = point.odds.log2();
        let Some(variance) = point.variance() else {
            continue;
        };
        if x == 0.0 || !point.elo.value.is_finite() {
            continue;
        }
        weighted_xx += x * x / variance;
        weighted_xy += x * point.elo.value / variance;
    }
    if weighted_xx <= 0.0 || !weighted_xx.is_finite() {
        return Err(FitError::NoUsablePoint);
    }
    let value = weighted_xy / weighted_xx;
    let half_width = Z_95 / weighted_xx.sqrt();
    Ok(EloPerDoubling {
        value,
        ci_low: value - half_width,
        ci_high: value + half_width,
        points: points.to_vec(),
    })
}

/// What a speed ratio `speed` (B's nodes per second over A's, with its interval) is worth in
/// Elo under `model`: `k · log2(speed)`, the interval the range over both intervals' box.
/// `None` when the speed or its interval is not a finite positive ratio.
pub(crate) fn speed_elo(model: &EloPerDoubling, speed: Estimate) -> Option<Estimate> {
    let logs = [speed.value, speed.ci_low, speed.ci_high].map(|r| {
        if r.is_finite() && r > 0.0 {
            Some(r.log2())
        } else {
            None
        }
    });
    let [Some(value), Some(low), Some(high)] = logs else {
        return None;
    };
    let corners = [model.ci_low, model.ci_high]
        .into_iter()
        .flat_map(|k| [k * low, k * high]);
    let (mut ci_low, mut ci_high) = (f64::INFINITY, f64::NEG_INFINITY);
    for corner in corners {
        ci_low = ci_low.min(corner);
        ci_high = ci_high.max(corner);
    }
    let value = model.value * value;
    // The point estimate lies in the box's range unless k's interval straddles 0 and r's does
    // not contain 1; widen to keep value inside the interval either way.
    Some(Estimate {
        value,
        ci_low: ci_low.min(value),
        ci_high: ci_high.max(value),
    })
}

/// The sum of two independent estimates: values add, and each side's half-widths add in
/// quadrature, as the standard deviations of independent normal errors do.
pub(crate) fn add(a: Estimate, b: Estimate) -> Estimate {
    let value = a.value + b.value;
    let below = (a.value - a.ci_low).hypot(b.value - b.ci_low);
    let above = (a.ci_high - a.value).hypot(b.ci_high - b.value);
    Estimate {
        value,
        ci_low: value - below,
        ci_high: value + above,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(odds: f64, value: f64, half_width: f64) -> OddsPoint {
        OddsPoint {
            odds,
            elo: Estimate {
                value,
                ci_low: value - half_width,
                ci_high: value + half_width,
            },
            games: 1000,
        }
    }

    #[test]
    fn one_point_at_double_time_is_its_own_slope() {
        let model = fit(&[point(2.0, 80.0, 19.6)]).unwrap();
        assert!((model.value - 80.0).abs() < 1e-9);
        assert!((model.ci_low - 60.4).abs() < 1e-3, "{model:?}");
        assert!((model.ci_high - 99.6).abs() < 1e-3, "{model:?}");
    }

    #[test]
    fn points_are_weighted_by_their_precision() {
        // At 4x odds, 200 Elo is 100 per doubling; at 2x, 60 Elo is 60 per doubling. The 4x
        // point has the narrower interval and twice the x, so it dominates.
        let model = fit(&[point(2.0, 60.0, 40.0), point(4.0, 200.0, 10.0)]).unwrap();
        assert!(model.value > 95.0 && model.value < 100.0, "{model:?}");
        // Equal precision, equal x: the plain mean of the two slopes.
        let even = fit(&[point(2.0, 60.0, 20.0), point(2.0, 100.0, 20.0)]).unwrap();
        assert!((even.value - 80.0).abs() < 1e-9);
        // Two points narrow the interval by sqrt(2).
        let single = fit(&[point(2.0, 80.0, 20.0)]).unwrap();
        let width = |m: &EloPerDoubling| m.ci_high - m.ci_low;
        assert!((width(&single) / width(&even) - 2f64.sqrt()).abs() < 1e-9);
    }

    #[test]
    fn odds_below_one_fit_the_same_line() {
        let model = fit(&[point(0.5, -80.0, 20.0), point(2.0, 80.0, 20.0)]).unwrap();
        assert!((model.value - 80.0).abs() < 1e-9);
    }

    #[test]
    fn no_usable_point_is_an_error() {
        assert_eq!(fit(&[]), Err(FitError::NoUsablePoint));
        assert_eq!(
            fit(&[point(1.0, 5.0, 10.0)]),
            Err(FitError::NoUsablePoint),
            "equal time says nothing of the slope"
        );
        assert_eq!(
            fit(&[point(2.0, 50.0, 0.0)]),
            Err(FitError::NoUsablePoint),
            "a zero-width interval has no variance"
        );
        assert_eq!(fit(&[point(-2.0, 5.0, 10.0)]), Err(FitError::BadOdds(-2.0)));
        assert!(matches!(
            fit(&[point(f64::NAN, 5.0, 10.0)]),
            Err(FitError::BadOdds(_))
        ));
    }

    #[test]
    fn a_speed_change_is_worth_k_log2_of_its_ratio() {
        let model = fit(&[point(2.0, 80.0, 19.6)]).unwrap();
        let twice = speed_elo(
            &model,
            Estimate {
                value: 2.0,
                ci_low: 2.0,
                ci_high: 2.0,
            },
        )
        .unwrap();
        assert!((twice.value - 80.0).abs() < 1e-9);
        assert!((twice.ci_low - model.ci_low).abs() < 1e-9);
        assert!((twice.ci_high - model.ci_high).abs() < 1e-9);

        let faster = Estimate {
            value: 1.021,
            ci_low: 1.012,
            ci_high: 1.030,
        };
        let elo = speed_elo(&model, faster).unwrap();
        assert!((elo.value - 80.0 * 1.021f64.log2()).abs() < 1e-9);
        assert!((elo.ci_low - model.ci_low * 1.012f64.log2()).abs() < 1e-9);
        assert!((elo.ci_high - model.ci_high * 1.030f64.log2()).abs() < 1e-9);

        // A slowdown whose interval straddles 1: the box's corners decide both ends.
        let unsure = Estimate {
            value: 0.99,
            ci_low: 0.98,
            ci_high: 1.01,
        };
        let elo = speed_elo(&model, unsure).unwrap();
        assert!(elo.value < 0.0);
        assert!((elo.ci_low - model.ci_high * 0.98f64.log2()).abs() < 1e-9);
        assert!((elo.ci_high - model.ci_high * 1.01f64.log2()).abs() < 1e-9);
        assert!(elo.ci_low <= elo.value && elo.value <= elo.ci_high);

        let broken = Estimate {
            value: 1.0,
            ci_low: f64::NAN,
            ci_high: 1.1,
        };
        assert_eq!(speed_elo(&model, broken), None);
    }

    #[test]
    fn sums_add_values_and_each_side_s_width_in_quadrature() {
        let a = Estimate {
            value: 2.0,
            ci_low: -1.0,
            ci_high: 6.0,
        };
        let b = Estimate {
            value: -1.0,
            ci_low: -5.0,
            ci_high: 2.0,
        };
        let sum = add(a, b);
        assert_eq!(sum.value, 1.0);
        assert!(
            (sum.ci_low - (1.0 - 5.0)).abs() < 1e-12,
            "3-4-5 below: {sum:?}"
        );
        assert!(
            (sum.ci_high - (1.0 + 5.0)).abs() < 1e-12,
            "4-3-5 above: {sum:?}"
        );
    }
}
