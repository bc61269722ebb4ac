package simulate

import (
	"fmt"
	"math"
	"strings"
	"sync"

	"github.com/yukart/candec/dbc"
)

// kind is how a signal's value is made.
type kind uint8

const (
	// kindValue: a physical value from the world, with noise and drift.
	kindValue kind = iota
	// kindCounter: a rolling counter, +1 a frame, wrapping at its width.
	kindCounter
	// kindChecksum: a CRC-8 over the frame's other bytes, computed last.
	kindChecksum
	// kindSwitch: a multiplexer switch, set by the frame's multiplexer
	// configuration.
	kindSwitch
)

// spec says how one signal's value is made.
type spec struct {
	kind kind
	// value returns the true physical value.
	value func(w *world) float64
	// noise is the standard deviation of the white measurement noise
	// added to every sample, physical units; vib adds that much more per
	// 10 m/s of speed (vibration).
	noise, vib float64
	// drift is the standard deviation of a slow random walk per √second
	// (mean-reverting over ten minutes), physical units: a sensor's
	// offset wandering, a room's temperature moving.
	drift float64
}

// sensor is a measured value: truth plus noise.
func sensor(f func(*world) float64, noise float64) spec {
	return spec{value: f, noise: noise}
}

// shaky is a sensor whose noise grows with speed.
func shaky(f func(*world) float64, noise, vib float64) spec {
	return spec{value: f, noise: noise, vib: vib}
}

// drifting is a slowly wandering value, a temperature for instance.
func drifting(f func(*world) float64, drift float64) spec {
	return spec{value: f, drift: drift}
}

// exact is a value known exactly: a state, a flag, a command, a counter
// kept by an ECU.
func exact(f func(*world) float64) spec { return spec{value: f} }

// constant is an exact value that never changes.
func constant(v float64) spec { return exact(func(*world) float64 { return v }) }

func bit(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// yukart gives the models of the yukart DBC's signals, by signal name.
// Signals not listed get a model from their DBC definition (fallback).
// It is made on first use, not in the package's initialisation, which
// every command of the binary would pay for.
var yukart = sync.OnceValue(func() map[string]spec {
	m := map[string]spec{
		// Motor, 100 Hz.
		"MOT_Speed":   sensor(func(w *world) float64 { return w.rpm }, 1.5),
		"MOT_Torque":  sensor(func(w *world) float64 { return w.torque }, 0.15),
		"MOT_Current": sensor(func(w *world) float64 { return w.torque / torqueConstant }, 0.3),
		"MOT_Direction": exact(func(w *world) float64 {
			return bit(w.rpm > 0) // 1 = Forward, 0 = Stopped
		}),
		"MOT_StatusCounter":  {kind: kindCounter},
		"MOT_StatusChecksum": {kind: kindChecksum},

		// Wheel speeds: hall sensors read zero when the wheel stands still,
		// and a quantum now and then from vibration.
		"WSS_SpeedFL": shaky(func(w *world) float64 { return w.wheel(true, false) }, 0.004, 0.05),
		"WSS_SpeedFR": shaky(func(w *world) float64 { return w.wheel(false, false) }, 0.004, 0.05),
		"WSS_SpeedRL": shaky(func(w *world) float64 { return w.wheel(true, true) }, 0.004, 0.05),
		"WSS_SpeedRR": shaky(func(w *world) float64 { return w.wheel(false, true) }, 0.004, 0.05),

		// Torque request.
		"VCU_TorqueCmd":        exact(func(w *world) float64 { return w.torqueCmd }),
		"VCU_TorqueLimitRegen": constant(regenLimit),
		"VCU_InverterEnable":   constant(1),
		"VCU_DirectionRequest": exact(func(w *world) float64 {
			return bit(w.gear == gearD) // 1 = Forward, 0 = Neutral
		}),
		"VCU_TorqueCounter":  {kind: kindCounter},
		"VCU_TorqueChecksum": {kind: kindChecksum},

		// Steering: the wheel stands slightly turned while parked.
		"SAS_Angle":   sensor(func(w *world) float64 { return w.steer + 2.3 }, 0.05),
		"SAS_Rate":    sensor(func(w *world) float64 { return w.steerRate }, 0.3),
		"SAS_Valid":   constant(1),
		"SAS_Counter": {kind: kindCounter},

		// IMU: the kart stands on a slight slope (the x and y offsets).
		"IMU_AccelX":    shaky(func(w *world) float64 { return w.accel + 0.118 }, 0.02, 0.15),
		"IMU_AccelY":    shaky(func(w *world) float64 { return w.latAccel - 0.05 }, 0.02, 0.15),
		"IMU_AccelZ":    shaky(func(*world) float64 { return gravity }, 0.02, 0.3),
		"IMU_YawRate":   shaky(func(w *world) float64 { return w.yawRate + 0.03 }, 0.05, 0.3),
		"IMU_PitchRate": shaky(func(w *world) float64 { return w.pitchRate - 0.01 }, 0.05, 0.4),
		"IMU_RollRate":  shaky(func(w *world) float64 { return w.rollRate + 0.02 }, 0.05, 0.4),

		// Pedals.
		"PDL_Throttle":      sensor(func(w *world) float64 { return 100 * w.throttle }, 0.04),
		"PDL_Throttle2":     sensor(func(w *world) float64 { return 99.6 * w.throttle }, 0.04),
		"PDL_BrakePressure": sensor(func(w *world) float64 { return 60 * w.brake }, 0.02),
		"PDL_BrakePosition": sensor(func(w *world) float64 { return 100 * w.brake }, 0.1),
		"PDL_BrakeSwitch":   exact(func(w *world) float64 { return bit(w.brake > 0.05) }),

		// Inverter electrical.
		"INV_DcVoltage": sensor(func(w *world) float64 { return w.packV - 0.05 }, 0.02),
		"INV_DcCurrent": sensor(func(w *world) float64 { return w.pElec / w.packV }, 0.1),
		"INV_PhaseCurrentRms": sensor(func(w *world) float64 {
			iq := w.torque / torqueConstant / math.Sqrt2
			return math.Sqrt(iq*iq + 9)
		}, 0.2),
		"INV_ModulationIndex": exact(func(w *world) float64 {
			return math.Min(1.15, 0.03+0.9*w.rpm/7000+0.05*math.Abs(w.torque)/torqueMax)
		}),

		// Vehicle dynamics (the VCU's filtered estimates).
		"VCU_VehicleSpeed":          exact(func(w *world) float64 { return w.kmh() }),
		"VCU_LongAccel":             sensor(func(w *world) float64 { return w.accel }, 0.004),
		"VCU_WheelSlip":             exact(func(w *world) float64 { return w.slip }),
		"VCU_TractionControlActive": exact(func(w *world) float64 { return bit(w.traction) }),
		"VCU_RegenActive":           exact(func(w *world) float64 { return bit(w.regen) }),

		// Battery pack.
		"BMS_PackVoltage":      sensor(func(w *world) float64 { return w.packV }, 0.01),
		"BMS_PackCurrent":      sensor(func(w *world) float64 { return w.packI }, 0.1),
		"BMS_SOC":              exact(func(w *world) float64 { return 100 * w.soc }),
		"BMS_PackPower":        sensor(func(w *world) float64 { return w.packV * w.packI / 1000 }, 0.005),
		"BMS_State":            constant(3), // Active
		"BMS_ContactorsClosed": constant(1),

		// Cell statistics follow the cells (see init for the cells).
		"BMS_CellVoltageMin": exact(func(w *world) float64 { lo, _, _, _ := w.cellExtremes(); return lo }),
		"BMS_CellVoltageMax": exact(func(w *world) float64 { _, hi, _, _ := w.cellExtremes(); return hi }),
		"BMS_CellMinIndex":   exact(func(w *world) float64 { _, _, i, _ := w.cellExtremes(); return float64(i) }),
		"BMS_CellMaxIndex":   exact(func(w *world) float64 { _, _, _, i := w.cellExtremes(); return float64(i) }),

		// Inverter state.
		"INV_State":           constant(4), // Running
		"INV_Enabled":         constant(1),
		"INV_DischargeActive": constant(0),
		"INV_FaultCode":       constant(0),
		"INV_Derating":        exact(func(w *world) float64 { return clamp(5*(w.igbt-85), 0, 100) }),

		// Vehicle state.
		"VCU_VehicleState": exact(func(w *world) float64 { return float64(w.vehicleState) }),
		"VCU_Gear":         exact(func(w *world) float64 { return float64(w.gear) }),
		"VCU_DriveMode":    exact(func(w *world) float64 { return float64(w.driveMode) }),
		"VCU_HvReady":      constant(1),
		"VCU_BrakeLight":   exact(func(w *world) float64 { return bit(w.brake > 0.05) }),
		"VCU_KeyPosition":  constant(keyOn),

		// Temperatures drift: the thermal model moves them slowly, a tiny
		// random walk on top keeps them from being perfectly smooth.
		"MOT_TempStator":       drifting(func(w *world) float64 { return w.stator }, 0.01),
		"INV_TempIgbt":         drifting(func(w *world) float64 { return w.igbt }, 0.01),
		"INV_TempGateDriver":   drifting(func(w *world) float64 { return w.gateDrv }, 0.01),
		"INV_TempControlBoard": drifting(func(w *world) float64 { return w.board }, 0.01),
		"BMS_TempMin":          drifting(func(w *world) float64 { return w.battery - 1.3 }, 0.005),
		"BMS_TempMax":          drifting(func(w *world) float64 { return w.battery + 1.6 }, 0.005),
		"BMS_TempAvg":          drifting(func(w *world) float64 { return w.battery }, 0.005),
		"BMS_TempMinSensor":    constant(7),
		"BMS_TempMaxSensor":    constant(3),
		"COOL_TempInlet":       drifting(func(w *world) float64 { return w.coolIn }, 0.01),
		"COOL_TempOutlet":      drifting(func(w *world) float64 { return w.coolOut }, 0.01),
		"COOL_PumpDuty":        exact(func(w *world) float64 { return w.pump }),
		"COOL_FanDuty":         exact(func(w *world) float64 { return w.fan }),
		"COOL_FlowRate":        sensor(func(w *world) float64 { return w.flow }, 0.03),

		// Battery limits.
		"BMS_DischargeCurrentLimit": exact(func(w *world) float64 { return 400 - clamp(20*(w.battery-45), 0, 400) }),
		"BMS_ChargeCurrentLimit":    constant(120),
		"BMS_MaxPackVoltage":        constant(cellCount * 4.2),
		"BMS_MinPackVoltage":        constant(cellCount * 3.0),

		// Diagnostics (extended multiplexing: groups and pages).
		"DIAG_LvVoltage":           sensor(func(*world) float64 { return lvVoltage - 0.02 }, 0.005),
		"DIAG_LvCurrent":           sensor(func(w *world) float64 { return w.lvCurrent - 2.1 }, 0.05),
		"DIAG_EcuTemp":             drifting(func(w *world) float64 { return w.ecu }, 0.01),
		"DIAG_HvBusVoltage":        sensor(func(w *world) float64 { return w.packV - 0.05 }, 0.02),
		"DIAG_IsolationResistance": sensor(func(*world) float64 { return 2480 }, 15),
		"DIAG_ContactorPlus":       constant(1),
		"DIAG_ContactorMinus":      constant(1),
		"DIAG_HvilClosed":          constant(1),
		"DIAG_CanRxErrors":         constant(0),
		"DIAG_CanTxErrors":         constant(0),
		"DIAG_Uptime":              exact(func(w *world) float64 { return math.Floor(startUptime + w.t) }),
		"ENV_AmbientTemp":          drifting(func(w *world) float64 { return w.ambient }, 0.01),
		"ENV_AmbientPressure":      drifting(func(*world) float64 { return 101.32 }, 0.002),
		"ENV_Humidity":             drifting(func(*world) float64 { return 55 }, 0.02),
		"VCU_EnergyConsumed":       exact(func(w *world) float64 { return math.Floor(startUsedWh + w.usedWh) }),
		"VCU_EnergyRegenerated":    exact(func(w *world) float64 { return math.Floor(startRegenWh + w.regenWh) }),
		"VCU_RangeEstimate":        exact(func(w *world) float64 { return w.remainingWh() / w.consumption() }),
		"VCU_AvgConsumption":       exact(func(w *world) float64 { return w.consumption() }),
		"DCDC_OutputVoltage":       sensor(func(*world) float64 { return lvVoltage }, 0.006),
		"DCDC_OutputCurrent":       sensor(func(w *world) float64 { return w.lvCurrent }, 0.05),
		"DCDC_Temp":                drifting(func(w *world) float64 { return w.dcdc }, 0.01),
		"DCDC_State":               constant(2), // Running
		"DASH_ModeRequest":         exact(func(w *world) float64 { return float64(w.modeRequest) }),
		"DASH_GearRequest":         exact(func(w *world) float64 { return float64(w.gearRequest) }),
		"DASH_LapButton":           exact(func(w *world) float64 { return bit(w.lapButton) }),
		"DASH_PitLimiterSwitch":    exact(func(w *world) float64 { return bit(w.pitLimiter) }),
		"VCU_Odometer":             exact(func(w *world) float64 { return startOdometer + w.distance/1000 }),
		"VCU_TripDistance":         exact(func(w *world) float64 { return startTrip + w.distance/1000 }),
		"VCU_OperatingHours":       exact(func(w *world) float64 { return startHours + w.t/3600 }),
		"BMS_SOH":                  constant(soh),
		"BMS_CycleCount":           constant(cycleCount),
		"BMS_RemainingCapacity":    exact(func(w *world) float64 { return w.soc * packCapacityAh * soh / 100 }),
		"BMS_BalancingActive":      constant(0),
		"BMS_FaultCode":            constant(0),
		"CHG_OutputVoltage":        constant(0),
		"CHG_OutputCurrent":        constant(0),
		"CHG_HardwareFault":        constant(0),
		"CHG_InputVoltageFault":    constant(1), // no mains: the kart is not plugged in
		"CHG_Stopped":              constant(1),
		"TPMS_PressureFL":          sensor(func(w *world) float64 { return w.tyrePressure(0.95) }, 0.002),
		"TPMS_PressureFR":          sensor(func(w *world) float64 { return w.tyrePressure(0.95) }, 0.002),
		"TPMS_PressureRL":          sensor(func(w *world) float64 { return w.tyrePressure(1.0) }, 0.002),
		"TPMS_PressureRR":          sensor(func(w *world) float64 { return w.tyrePressure(1.0) }, 0.002),
	}
	for i := range cellCount {
		m[fmt.Sprintf("BMS_Cell%02d", i+1)] = sensor(func(w *world) float64 { return w.cell[i] }, 0.0008)
	}
	return m
})

// specFor returns the model of signal s: the yukart table's entry, or
// one derived from the DBC definition.
func specFor(s *dbc.Signal, r *rng) spec {
	if s.Multiplexer {
		return spec{kind: kindSwitch}
	}
	if sp, ok := yukart()[s.Name]; ok {
		return sp
	}
	return fallback(s, r)
}

// fallback derives a plausible model for a signal the table does not
// know (another car's DBC): counters and checksums by name, states from
// the value table, flags off, and any other value resting somewhere in
// its range with a flicker of noise and a slow drift.
func fallback(s *dbc.Signal, r *rng) spec {
	name := strings.ToLower(s.Name)
	integer := s.Type == dbc.Integer
	switch {
	case integer && (strings.Contains(name, "counter") || strings.Contains(name, "alive") || strings.Contains(name, "rolling")):
		return spec{kind: kindCounter}
	case integer && (strings.Contains(name, "checksum") || strings.Contains(name, "crc") || strings.Contains(name, "chksum")):
		return spec{kind: kindChecksum}
	case len(s.Values) > 0:
		v := s.Values[0].Value
		for _, d := range s.Values {
			if d.Value >= 0 {
				v = d.Value
				break
			}
		}
		return constant(float64(v)*s.Factor + s.Offset)
	case integer && s.Length == 1:
		return constant(s.Offset)
	}
	lo, hi := physRange(s)
	base := lo + (hi-lo)*r.uniform(0.25, 0.75)
	step := math.Abs(s.Factor)
	if !integer || step == 0 {
		step = (hi - lo) * 0.001
	}
	return spec{value: func(*world) float64 { return base }, noise: 0.6 * step, drift: 0.002 * (hi - lo)}
}

// physRange returns the signal's DBC range, or the range its raw values
// can represent when the DBC gives none.
func physRange(s *dbc.Signal) (lo, hi float64) {
	if s.Min < s.Max {
		return s.Min, s.Max
	}
	var rlo, rhi float64
	switch {
	case s.Type != dbc.Integer:
		rlo, rhi = -100, 100
	case s.Signed:
		rlo, rhi = -math.Ldexp(1, s.Length-1), math.Ldexp(1, s.Length-1)-1
	default:
		rlo, rhi = 0, math.Ldexp(1, s.Length)-1
	}
	lo, hi = rlo*s.Factor+s.Offset, rhi*s.Factor+s.Offset
	if s.Type != dbc.Integer {
		lo, hi = rlo, rhi
	}
	if lo > hi {
		lo, hi = hi, lo
	}
	return lo, hi
}
