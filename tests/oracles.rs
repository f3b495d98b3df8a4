//! Queueing-theory oracles: the engine must reproduce analytic mean response times.
//!
//! Tolerances are statistical: each run is long enough that the standard error of the
//! mean response is about 1% (M/M/1 at rho = 0.7 with 200,000 jobs: the asymptotic
//! variance of the mean is ~336/n s^2, sd ~0.041 s on 3.33 s), and we allow 5%, about
//! four standard errors, so a correct engine fails with negligible probability while a
//! wrong discipline (FCFS vs PS, wrong server count) misses by far more.

mod common;

use bwsim::model::Duration;
use bwsim::run::run_model;
use common::*;

const TOL: f64 = 0.05;

fn response(model: &bwsim::model::Model) -> f64 {
    let r = run_model(model).expect("runs");
    assert!(r.notes.is_empty(), "{:?}", r.notes);
    r.response_mean_s
}

fn assert_close(what: &str, simulated: f64, expected: f64) {
    let err = (simulated - expected).abs() / expected;
    println!(
        "{what}: expected {expected:.4} s, simulated {simulated:.4} s, error {:.2}%",
        err * 100.0
    );
    assert!(
        err < TOL,
        "{what}: expected {expected:.4}, got {simulated:.4} ({:.1}% off)",
        err * 100.0
    );
}

#[test]
fn mm1_mean_response_is_one_over_mu_minus_lambda() {
    let m = queue_model(
        1,
        Duration::Exponential { mean_s: 1.0 },
        poisson(0.7, 200_000, 20_000),
        11,
    );
    assert_close("M/M/1 rho=0.7", response(&m), 1.0 / (1.0 - 0.7));
}

#[test]
fn mmc_mean_response_matches_erlang_c() {
    // M/M/4, lambda 3.2, mu 1: W = C(4, 3.2) / (4 - 3.2) + 1.
    let expected = erlang_c(4, 3.2) / (4.0 - 3.2) + 1.0;
    let m = queue_model(
        4,
        Duration::Exponential { mean_s: 1.0 },
        poisson(3.2, 200_000, 20_000),
        12,
    );
    assert_close("M/M/4 rho=0.8", response(&m), expected);
}

#[test]
fn md1_mean_response_matches_pollaczek_khinchine() {
    // M/D/1: Wq = rho / (2 mu (1 - rho)); lambda 0.7, D = 1 s.
    let expected = 0.7 / (2.0 * 0.3) + 1.0;
    let m = queue_model(1, Duration::Fixed(1.0), poisson(0.7, 200_000, 20_000), 13);
    assert_close("M/D/1 rho=0.7", response(&m), expected);
}

#[test]
fn processor_sharing_response_is_insensitive_to_service_distribution() {
    // M/G/1-PS: E[T] = E[S] / (1 - rho), for exponential and deterministic service alike.
    let expected = 1.0 / (1.0 - 0.7);
    let mm = ps_model(
        Duration::Exponential { mean_s: 1.0 },
        poisson(0.7, 200_000, 20_000),
        14,
    );
    assert_close("M/M/1-PS rho=0.7", response(&mm), expected);
    let md = ps_model(Duration::Fixed(1.0), poisson(0.7, 200_000, 20_000), 15);
    let md_ps = response(&md);
    assert_close("M/D/1-PS rho=0.7", md_ps, expected);
    // And PS differs from FCFS for deterministic service (3.33 s vs 2.17 s).
    let fcfs = response(&queue_model(
        1,
        Duration::Fixed(1.0),
        poisson(0.7, 200_000, 20_000),
        15,
    ));
    assert!(
        md_ps > fcfs * 1.3,
        "PS {md_ps} should be well above FCFS {fcfs}"
    );
}
