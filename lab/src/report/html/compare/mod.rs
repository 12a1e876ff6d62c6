//! The plots of a comparison's page (its layout is `html::page`): each round's NPS, the
//! bootstrap of the speed ratio, the eval exits by tier and by side buckets, the function
//! movers.

pub(crate) mod bootstrap;
pub(crate) mod exit_shares;
pub(crate) mod movers;
pub(crate) mod nps_rounds;
pub(crate) mod side_buckets;
