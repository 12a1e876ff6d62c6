//! The plots of a comparison's page (its layout is `html::page`): each round's NPS, the
//! bootstrap of the speed ratio, the eval exits by tier and by side buckets, the function
//! movers.

pub mod bootstrap;
pub mod exit_shares;
pub mod movers;
pub mod nps_rounds;
pub mod side_buckets;
