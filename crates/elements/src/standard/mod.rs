//! Standard elements: sources, sinks, counters, queues, schedulers of packets between ports.

use sluice_core::ElementClass;

mod adjust_timestamp;
mod align;
mod alignment_info;
mod average_counter;
mod bypass;
mod check_length;
mod check_paint;
mod clicky_info;
mod clipboard;
mod counter;
mod delay_shaper;
mod delay_unqueue;
mod discard;
mod front_drop_queue;
mod hash_switch;
mod hub;
mod idle;
mod infinite_source;
mod input_switch;
mod link_unqueue;
mod message;
mod mixed_queue;
mod notifier_debug;
mod null;
mod pad;
mod paint;
mod paint_switch;
mod paint_tee;
mod port_info;
mod print;
mod prio_sched;
mod pull_switch;
mod pull_tee;
mod pull_to_push;
mod queue;
mod random_sample;
mod random_seed;
mod random_switch;
mod rated_source;
mod rated_splitter;
mod rated_unqueue;
mod resize;
mod round_robin_sched;
mod round_robin_switch;
mod set_timestamp;
mod set_timestamp_delta;
mod shaper;
mod static_switch;
mod stride_sched;
mod strip;
mod strip_to_network_header;
mod suppressor;
mod switch;
mod tee;
mod time_filter;
mod time_sorted_sched;
mod timed_sink;
mod timed_source;
mod truncate;
mod unqueue;
mod unstrip;
pub(crate) mod util;

pub use queue::Queue;

/// Classes of this family.
pub const CLASSES: &[ElementClass] = &[
    adjust_timestamp::CLASS,
    average_counter::CLASS,
    rated_splitter::BANDWIDTH_CLASS,
    rated_unqueue::BANDWIDTH_CLASS,
    bypass::CLASS,
    check_length::CLASS,
    check_paint::CLASS,
    clipboard::CLASS,
    counter::CLASS,
    delay_shaper::CLASS,
    delay_unqueue::CLASS,
    discard::CLASS,
    front_drop_queue::CLASS,
    hash_switch::CLASS,
    idle::CLASS,
    infinite_source::CLASS,
    input_switch::CLASS,
    link_unqueue::CLASS,
    message::CLASS,
    mixed_queue::CLASS,
    notifier_debug::CLASS,
    null::CLASS,
    null::PUSH_CLASS,
    null::PULL_CLASS,
    pad::CLASS,
    paint::CLASS,
    paint_tee::CLASS,
    print::CLASS,
    prio_sched::CLASS,
    pull_switch::CLASS,
    pull_switch::SIMPLE_CLASS,
    pull_tee::CLASS,
    pull_to_push::CLASS,
    queue::CLASS,
    queue::SIMPLE_CLASS,
    queue::FULL_NOTE_CLASS,
    queue::QUICK_NOTE_CLASS,
    queue::NOTIFIER_CLASS,
    rated_source::CLASS,
    rated_splitter::CLASS,
    rated_unqueue::CLASS,
    resize::CLASS,
    round_robin_sched::CLASS,
    round_robin_switch::CLASS,
    set_timestamp::CLASS,
    static_switch::CLASS,
    strip::CLASS,
    strip_to_network_header::CLASS,
    suppressor::CLASS,
    switch::CLASS,
    tee::CLASS,
    time_filter::CLASS,
    timed_source::CLASS,
    unqueue::CLASS,
    unstrip::CLASS,
    paint_switch::CLASS,
    truncate::CLASS,
    hub::CLASS,
    timed_sink::CLASS,
    shaper::CLASS,
    shaper::BANDWIDTH_CLASS,
    stride_sched::CLASS,
    set_timestamp_delta::CLASS,
    time_sorted_sched::CLASS,
    align::CLASS,
    alignment_info::CLASS,
    clicky_info::CLASS,
    random_seed::CLASS,
    random_switch::CLASS,
    random_sample::CLASS,
    port_info::CLASS,
];
