//! chessclock unit firmware for the Raspberry Pi Pico (RP2040), on embassy.
//!
//! The logic is `chessclock-firmware` (host-tested); this file only wires it
//! to the chip:
//! * **core 1** watches the levers and the arbiter button: each pin-change
//!   wakes it, the RP2040 timer is read at once and handed to the debouncer
//!   as the edge's instant; settled presses (stamped at their FIRST edge)
//!   go to core 0 through a channel. Nothing else runs on core 1, so the
//!   stamp is a few microseconds after the contact closed, whatever core 0
//!   is doing (bit-banging a display, USB);
//! * **core 0** runs the USB device (CDC-ACM, the identity of SPEC.md
//!   section 1) and one loop: read the host's bytes into the unit, hand its
//!   frames to the USB transmitter, show its outputs on the display modules,
//!   LEDs and buzzer, sleep until the unit's next deadline;
//! * the device clock is the RP2040's 64-bit microsecond timer (12 MHz
//!   crystal, ±30 ppm on a Pico), which starts at 0 at reset and never wraps;
//! * the serial number is the flash chip's 64-bit unique id in hex, the
//!   `boot_id` 32 bits of the ring oscillator's random bit.
//!
//! Pins: `hardware/README.md`. Unit kind: cargo features `buttons`,
//! `display` or `combined` (plus `max7219`, `one-panel`).

#![no_std]
#![no_main]

#[cfg(not(any(feature = "buttons", feature = "display", feature = "combined")))]
compile_error!("choose the unit kind: --features buttons, display or combined");
#[cfg(any(
    all(feature = "buttons", feature = "display"),
    all(feature = "buttons", feature = "combined"),
    all(feature = "display", feature = "combined"),
))]
compile_error!("choose exactly one unit kind: buttons, display or combined");

use chessclock_firmware::beep::{vsys_mv, LowBattery};
use chessclock_firmware::config::{
    parse_product_id, serial_from_unique_id, Identity, UnitConfig, UsbSerialNumber, USB_VENDOR_ID,
};
#[cfg(feature = "has-display")]
use chessclock_firmware::pins::Delay;
use chessclock_firmware::pins::Line;
use chessclock_firmware::unit::{Outputs, Unit, TX_BUFFER};
use chessclock_firmware::{ButtonEvent, DisplayChip};
use embassy_executor::Spawner;
use embassy_futures::join::join;
use embassy_futures::select::{select, select3, Either, Either3};
use embassy_rp::adc::{self, Adc};
use embassy_rp::bind_interrupts;
use embassy_rp::clocks::RoscRng;
use embassy_rp::flash::{Blocking, Flash};
use embassy_rp::gpio::{Input, Level, Output, Pull};
use embassy_rp::peripherals::USB;
use embassy_rp::usb::{self, Driver};
use embassy_sync::blocking_mutex::raw::CriticalSectionRawMutex;
use embassy_sync::channel::Channel;
use embassy_time::{Duration, Instant, Timer};
use embassy_usb::class::cdc_acm::{self, CdcAcmClass, Receiver, Sender};
use embassy_usb::driver::EndpointError;
use static_cell::StaticCell;

const CHIP: DisplayChip = if cfg!(feature = "max7219") {
    DisplayChip::Max7219
} else {
    DisplayChip::Tm1637
};
const PANELS: u8 = if cfg!(feature = "one-panel") { 1 } else { 2 };

/// The unit this build is.
const CONFIG: UnitConfig = if cfg!(feature = "buttons") {
    UnitConfig::buttons()
} else if cfg!(feature = "display") {
    UnitConfig::display(CHIP, PANELS)
} else {
    UnitConfig::combined(CHIP, PANELS)
};

/// `CHESSCLOCK_USB_PID` at build time (hex), else the pid.codes test PID.
const USB_PRODUCT_ID: u16 = match parse_product_id(option_env!("CHESSCLOCK_USB_PID")) {
    Some(pid) => pid,
    None => panic!("CHESSCLOCK_USB_PID must be 1 to 4 hex digits, e.g. 0x1234"),
};
/// `CHESSCLOCK_VENDOR` at build time (iManufacturer and HELLO vendor).
const VENDOR: &str = match option_env!("CHESSCLOCK_VENDOR") {
    Some(v) => v,
    None => "chessclockd",
};
const MODEL: &str = if cfg!(feature = "buttons") {
    "pico-buttons"
} else if cfg!(feature = "display") {
    "pico-display"
} else {
    "pico-combined"
};
const FIRMWARE: &str = env!("CARGO_PKG_VERSION");
const FLASH_SIZE: usize = 2 * 1024 * 1024;
/// Full-speed bulk packets.
const PACKET: usize = 64;
/// A USB write the host does not take within this (port closed, host
/// stalled) is dropped: the frame is lost like one on a noisy line.
const WRITE_TIMEOUT: Duration = Duration::from_millis(20);
const BATTERY_EVERY_US: u64 = 1_000_000;
/// Bus current asked for (USB `bMaxPower`): a Pico and LEDs; two TM1637
/// modules at full brightness; two MAX7219 modules (up to about 250 mA each
/// with every segment lit).
const MAX_POWER_MA: u16 = if !cfg!(feature = "has-display") {
    100
} else if cfg!(feature = "max7219") {
    500
} else {
    250
};

bind_interrupts!(struct Irqs {
    USBCTRL_IRQ => usb::InterruptHandler<USB>;
});

/// Settled button events, core 1 to core 0. 16 presses is more than two
/// players and an arbiter make between two passes of core 0's loop.
static PRESSES: Channel<CriticalSectionRawMutex, ButtonEvent, 16> = Channel::new();

fn now_us() -> u64 {
    Instant::now().as_micros()
}

/// A push-pull output as a logic [`Line`].
struct Pin(Output<'static>);

impl Line for Pin {
    fn set(&mut self, high: bool) {
        self.0
            .set_level(if high { Level::High } else { Level::Low });
    }
}

/// An open-drain line (TM1637 DIO: the module pulls it up).
#[cfg(all(feature = "has-display", not(feature = "max7219")))]
struct OpenDrain(embassy_rp::gpio::OutputOpenDrain<'static>);

#[cfg(all(feature = "has-display", not(feature = "max7219")))]
impl Line for OpenDrain {
    fn set(&mut self, high: bool) {
        self.0
            .set_level(if high { Level::High } else { Level::Low });
    }
}

/// Microsecond busy waits for the display chips' bit timing.
#[cfg(feature = "has-display")]
struct BusyWait;

#[cfg(feature = "has-display")]
impl Delay for BusyWait {
    fn delay_us(&mut self, us: u32) {
        embassy_time::block_for(Duration::from_micros(u64::from(us)));
    }
}

#[cfg(all(feature = "has-display", not(feature = "max7219")))]
type Panels = [Option<chessclock_firmware::drivers::tm1637::Tm1637<OpenDrain, OpenDrain>>; 2];

#[cfg(all(feature = "has-display", feature = "max7219"))]
type Panels = chessclock_firmware::drivers::max7219::Max7219<Pin, Pin, Pin>;

/// Everything core 0 drives besides USB.
struct Hardware {
    #[cfg(feature = "has-display")]
    panels: Panels,
    #[cfg(feature = "has-display")]
    icon_leds: [Pin; 5],
    #[cfg(feature = "has-buttons")]
    player_leds: [Pin; 3],
    buzzer: Pin,
    mute: Input<'static>,
    link_leds: [Pin; 2],
    low_power_led: Pin,
    adc: Adc<'static, adc::Blocking>,
    vsys: adc::Channel<'static>,
}

impl Hardware {
    fn show(&mut self, out: &Outputs, last: Option<&Outputs>) {
        #[cfg(feature = "has-display")]
        {
            let changed =
                last.is_none_or(|l| l.panels != out.panels || l.brightness != out.brightness);
            if changed {
                self.show_panels(out);
            }
            let icons = [
                out.flag[0],
                out.running[0],
                out.flag[1],
                out.running[1],
                out.paused,
            ];
            for (led, on) in self.icon_leds.iter_mut().zip(icons) {
                led.set(on);
            }
        }
        #[cfg(not(feature = "has-display"))]
        let _ = last;
        #[cfg(feature = "has-buttons")]
        for (led, on) in
            self.player_leds
                .iter_mut()
                .zip([out.leds.left, out.leds.right, out.leds.arbiter])
        {
            led.set(on);
        }
        self.buzzer.set(out.buzzer);
        for led in &mut self.link_leds {
            led.set(out.link_led);
        }
        self.low_power_led.set(out.low_power);
    }

    #[cfg(all(feature = "has-display", not(feature = "max7219")))]
    fn show_panels(&mut self, out: &Outputs) {
        for (module, image) in self.panels.iter_mut().zip(&out.panels) {
            if let Some(module) = module {
                module.show(image, out.brightness, &mut BusyWait);
            }
        }
    }

    #[cfg(all(feature = "has-display", feature = "max7219"))]
    fn show_panels(&mut self, out: &Outputs) {
        let count = out.panel_count.min(out.panels.len());
        self.panels
            .show(&out.panels[..count], out.brightness, &mut BusyWait);
    }

    /// The alarm switch closes to ground: sound off (FIDE: switchable).
    fn muted(&self) -> bool {
        self.mute.is_low()
    }

    fn supply_mv(&mut self) -> Option<u32> {
        self.adc.blocking_read(&mut self.vsys).ok().map(vsys_mv)
    }
}

#[embassy_executor::main]
async fn main(_spawner: Spawner) {
    let p = embassy_rp::init(Default::default());

    // Identity: read the flash id before core 1 runs (flash commands need
    // both cores off the flash).
    let mut flash = Flash::<_, Blocking, FLASH_SIZE>::new_blocking(p.FLASH);
    let mut uid = [0u8; 8];
    let serial = match flash.blocking_unique_id(&mut uid) {
        Ok(()) => serial_from_unique_id(&uid),
        Err(_) => serial_from_unique_id(&[]),
    };
    let identity = Identity::new(VENDOR, MODEL, serial.as_str(), FIRMWARE);
    let boot_id = {
        let mut rng = RoscRng;
        rng.next_u32()
    };

    #[cfg(feature = "has-buttons")]
    buttons::start(
        p.CORE1,
        [
            Input::new(p.PIN_2, Pull::Up),
            Input::new(p.PIN_3, Pull::Up),
            Input::new(p.PIN_4, Pull::Up),
        ],
    );

    let mut hw = Hardware {
        #[cfg(all(feature = "has-display", not(feature = "max7219")))]
        panels: {
            use chessclock_firmware::drivers::tm1637::Tm1637;
            use embassy_rp::gpio::OutputOpenDrain;
            let left = Tm1637::new(
                OpenDrain(OutputOpenDrain::new(p.PIN_10, Level::High)),
                OpenDrain(OutputOpenDrain::new(p.PIN_11, Level::High)),
            );
            let right = Tm1637::new(
                OpenDrain(OutputOpenDrain::new(p.PIN_12, Level::High)),
                OpenDrain(OutputOpenDrain::new(p.PIN_13, Level::High)),
            );
            [Some(left), (CONFIG.panel_count() > 1).then_some(right)]
        },
        #[cfg(all(feature = "has-display", feature = "max7219"))]
        panels: chessclock_firmware::drivers::max7219::Max7219::new(
            Pin(Output::new(p.PIN_19, Level::Low)),
            Pin(Output::new(p.PIN_18, Level::Low)),
            Pin(Output::new(p.PIN_17, Level::High)),
            CONFIG.panel_count(),
        ),
        #[cfg(feature = "has-display")]
        icon_leds: [
            Pin(Output::new(p.PIN_20, Level::Low)),
            Pin(Output::new(p.PIN_21, Level::Low)),
            Pin(Output::new(p.PIN_22, Level::Low)),
            Pin(Output::new(p.PIN_26, Level::Low)),
            Pin(Output::new(p.PIN_27, Level::Low)),
        ],
        #[cfg(feature = "has-buttons")]
        player_leds: [
            Pin(Output::new(p.PIN_6, Level::Low)),
            Pin(Output::new(p.PIN_7, Level::Low)),
            Pin(Output::new(p.PIN_8, Level::Low)),
        ],
        buzzer: Pin(Output::new(p.PIN_15, Level::Low)),
        mute: Input::new(p.PIN_14, Pull::Up),
        link_leds: [
            Pin(Output::new(p.PIN_25, Level::High)),
            Pin(Output::new(p.PIN_16, Level::High)),
        ],
        low_power_led: Pin(Output::new(p.PIN_28, Level::Low)),
        adc: Adc::new_blocking(p.ADC, adc::Config::default()),
        vsys: adc::Channel::new_pin(p.PIN_29, Pull::None),
    };

    // USB: CDC-ACM with the identity of SPEC.md section 1.
    static USB_SERIAL: StaticCell<UsbSerialNumber> = StaticCell::new();
    let usb_serial: &'static UsbSerialNumber =
        USB_SERIAL.init(UsbSerialNumber::new(CONFIG.kind, &identity.serial));
    let mut usb_config = embassy_usb::Config::new(USB_VENDOR_ID, USB_PRODUCT_ID);
    usb_config.manufacturer = Some(VENDOR);
    usb_config.product = Some(CONFIG.kind.usb_product());
    usb_config.serial_number = Some(usb_serial.as_str());
    usb_config.max_power = MAX_POWER_MA;
    // A single-function CDC device: class in the device descriptor, no IAD.
    usb_config.device_class = 0x02;
    usb_config.device_sub_class = 0x00;
    usb_config.device_protocol = 0x00;
    usb_config.composite_with_iads = false;

    static CONFIG_DESCRIPTOR: StaticCell<[u8; 128]> = StaticCell::new();
    static BOS_DESCRIPTOR: StaticCell<[u8; 32]> = StaticCell::new();
    static CONTROL_BUF: StaticCell<[u8; 64]> = StaticCell::new();
    static CDC_STATE: StaticCell<cdc_acm::State<'static>> = StaticCell::new();
    let mut builder = embassy_usb::Builder::new(
        Driver::new(p.USB, Irqs),
        usb_config,
        CONFIG_DESCRIPTOR.init([0; 128]),
        BOS_DESCRIPTOR.init([0; 32]),
        &mut [],
        CONTROL_BUF.init([0; 64]),
    );
    let class = CdcAcmClass::new(
        &mut builder,
        CDC_STATE.init(cdc_acm::State::new()),
        PACKET as u16,
    );
    let mut device = builder.build();
    let (tx, rx) = class.split();

    let unit = Unit::new(CONFIG, &identity, boot_id, now_us());
    join(device.run(), link_loop(unit, &mut hw, tx, rx)).await;
}

enum Io {
    Read(usize),
    Gone,
    Connected,
}

/// Core 0's loop: host bytes in, frames out, outputs shown; sleeps until
/// the unit's next deadline, a USB packet or a press.
async fn link_loop(
    mut unit: Unit,
    hw: &mut Hardware,
    mut tx: Sender<'static, Driver<'static, USB>>,
    mut rx: Receiver<'static, Driver<'static, USB>>,
) {
    let mut connected = false;
    let mut battery = LowBattery::new();
    let mut next_battery = 0u64;
    let mut last: Option<Outputs> = None;
    let mut rx_buf = [0u8; PACKET];
    let mut tx_buf = [0u8; TX_BUFFER];
    loop {
        let now = now_us();
        unit.set_muted(hw.muted());
        if now >= next_battery {
            if let Some(mv) = hw.supply_mv() {
                unit.set_low_power(battery.update(mv));
            }
            next_battery = now + BATTERY_EVERY_US;
        }
        while let Ok(press) = PRESSES.try_receive() {
            let _ = unit.button(press);
        }
        if connected {
            while let Some(n) = unit.transmit(now_us(), &mut tx_buf) {
                match write_frame(&mut tx, tx_buf.get(..n).unwrap_or(&[])).await {
                    Ok(()) => {}
                    Err(WriteFailed::Stalled { partial }) => {
                        if partial {
                            unit.transmit_failed();
                        }
                    }
                    Err(WriteFailed::Gone) => {
                        connected = false;
                        unit.host_gone(now_us());
                        break;
                    }
                }
            }
        }
        let out = unit.outputs(now_us());
        if last != Some(out) {
            hw.show(&out, last.as_ref());
            last = Some(out);
        }
        let deadline = unit.next_deadline(now_us()).min(next_battery);
        let io = async {
            if connected {
                match rx.read_packet(&mut rx_buf).await {
                    Ok(n) => Io::Read(n),
                    Err(_) => Io::Gone,
                }
            } else {
                rx.wait_connection().await;
                Io::Connected
            }
        };
        match select3(
            io,
            Timer::at(Instant::from_micros(deadline)),
            PRESSES.receive(),
        )
        .await
        {
            Either3::First(Io::Read(n)) => unit.receive(rx_buf.get(..n).unwrap_or(&[]), now_us()),
            Either3::First(Io::Gone) => {
                connected = false;
                unit.host_gone(now_us());
            }
            Either3::First(Io::Connected) => {
                connected = true;
                unit.host_connected(now_us());
            }
            Either3::Second(()) => {}
            Either3::Third(press) => {
                let _ = unit.button(press);
            }
        }
    }
}

enum WriteFailed {
    /// The host did not take a packet in time; `partial`: part of the
    /// frame went out.
    Stalled { partial: bool },
    /// USB reset or unplugged.
    Gone,
}

/// One frame in full-speed packets; a zero-length packet ends a frame that
/// fills its last packet, so the host sees it without waiting for more.
async fn write_frame(
    tx: &mut Sender<'static, Driver<'static, USB>>,
    bytes: &[u8],
) -> Result<(), WriteFailed> {
    let mut partial = false;
    for chunk in bytes.chunks(PACKET) {
        write_packet(tx, chunk, partial).await?;
        partial = true;
    }
    if bytes.len() % PACKET == 0 {
        write_packet(tx, &[], partial).await?;
    }
    Ok(())
}

async fn write_packet(
    tx: &mut Sender<'static, Driver<'static, USB>>,
    packet: &[u8],
    partial: bool,
) -> Result<(), WriteFailed> {
    match select(tx.write_packet(packet), Timer::after(WRITE_TIMEOUT)).await {
        Either::First(Ok(())) => Ok(()),
        Either::First(Err(EndpointError::Disabled)) => Err(WriteFailed::Gone),
        Either::First(Err(EndpointError::BufferOverflow)) => Err(WriteFailed::Stalled { partial }),
        Either::Second(()) => Err(WriteFailed::Stalled { partial }),
    }
}

#[cfg(feature = "has-buttons")]
mod buttons {
    //! Core 1: the levers and the arbiter button.

    use chessclock_firmware::debounce::Buttons;
    use embassy_executor::Executor;
    use embassy_futures::select::{select4, Either4};
    use embassy_rp::gpio::Input;
    use embassy_rp::multicore::{spawn_core1, Stack};
    use embassy_rp::peripherals::CORE1;
    use embassy_rp::Peri;
    use embassy_time::{Instant, Timer};
    use static_cell::{ConstStaticCell, StaticCell};

    use super::{now_us, PRESSES};

    static STACK: ConstStaticCell<Stack<4096>> = ConstStaticCell::new(Stack::new());
    static EXECUTOR1: StaticCell<Executor> = StaticCell::new();

    /// Starts core 1 watching `pins` (left, right, arbiter; closed to
    /// ground when pressed, pulled up).
    pub fn start(core1: Peri<'static, CORE1>, pins: [Input<'static>; 3]) {
        spawn_core1(core1, STACK.take(), move || {
            let executor = EXECUTOR1.init(Executor::new());
            executor.run(move |spawner| {
                if let Ok(token) = watch(pins) {
                    spawner.spawn(token);
                }
            })
        });
    }

    async fn until(deadline: Option<u64>) {
        match deadline {
            Some(t) => Timer::at(Instant::from_micros(t)).await,
            None => core::future::pending().await,
        }
    }

    #[embassy_executor::task]
    async fn watch(mut pins: [Input<'static>; 3]) {
        let levels = |pins: &[Input<'static>; 3]| pins.each_ref().map(|p| p.is_low());
        let mut buttons = Buttons::new(levels(&pins));
        loop {
            let deadline = buttons.deadline();
            let [left, right, arbiter] = &mut pins;
            let woke = select4(
                left.wait_for_any_edge(),
                right.wait_for_any_edge(),
                arbiter.wait_for_any_edge(),
                until(deadline),
            )
            .await;
            // The first thing after waking: the edge's instant.
            let now = now_us();
            match woke {
                Either4::First(()) => buttons.edge(0, now),
                Either4::Second(()) => buttons.edge(1, now),
                Either4::Third(()) => buttons.edge(2, now),
                Either4::Fourth(()) => {}
            }
            for press in buttons.sample(levels(&pins), now).iter() {
                // Full only if core 0 stalled for 16 presses: then the
                // press is lost here as it would be in a full queue.
                let _ = PRESSES.try_send(press);
            }
        }
    }
}

#[panic_handler]
fn panic(_info: &core::panic::PanicInfo) -> ! {
    // Nothing here panics on input; if something did, a reset is the way
    // back: the host sees a new boot_id and resynchronises.
    cortex_m::peripheral::SCB::sys_reset()
}
