package simulate

import (
	"cmp"
	"math"
)

// The kart the world models: a 24s NMC pack, one motor driving the rear
// axle through a chain. The figures are plausible, not measured; they
// only need to make the signals move together the way a real car's do.
const (
	cellCount      = 24
	packCapacityAh = 60.0
	cellResistance = 0.0015 // Ω
	wheelRadius    = 0.14   // m
	gearRatio      = 4.0
	wheelbase      = 1.05 // m
	track          = 1.2  // m
	steeringRatio  = 5.0  // steering wheel degrees per tyre degree
	massKg         = 180.0
	gravity        = 9.806
	torqueMax      = 60.0    // Nm at full throttle in Normal mode
	powerMax       = 22000.0 // W at the shaft, motoring
	regenLimit     = 40.0    // Nm
	regenPowerMax  = 10000.0 // W at the shaft, regenerating
	brakeMax       = 0.7     // g the friction brakes reach
	torqueConstant = 0.2     // Nm per ampere of q-axis current
	idleRPM        = 250.0
	idleTorque     = 0.8 // Nm the idle speed control needs
	lvVoltage      = 13.8
	ocvEmpty       = 3.45 // cell open-circuit voltage at 0 % SOC
	ocvSpan        = 0.75 // and its rise to 100 %
)

// stepSeconds is the world's integration step. Signals sample the state
// of the last step, as an ECU samples its own slower control loop.
const stepSeconds = 0.005

// Values of the state signals, as in the yukart DBC's value tables.
const (
	vehicleReady = 3
	vehicleDrive = 4

	gearN = 2
	gearD = 3

	modeNormal = 2
	modeSport  = 3

	keyOn = 2
)

// world is the simulated kart: its driver's inputs, its motion, its
// powertrain, its battery and its temperatures, advanced in fixed steps.
// Signals read it; only advance changes it.
type world struct {
	t     float64 // seconds since the start of the capture
	steps int64
	r     rng

	// The driver.
	plan                     []segment
	seg                      int
	segStart                 float64
	throttle, brake          float64 // 0–1
	steer, steerRate         float64 // steering wheel, degrees and °/s, positive left
	laps                     int
	lapButton, pitLimiter    bool
	gearRequest, modeRequest int
	modeAt                   float64 // when the VCU follows the mode request

	// States.
	vehicleState, gear, driveMode int

	// Motion.
	speed     float64 // m/s
	accel     float64 // m/s²
	yawRate   float64 // °/s, positive counter-clockwise
	latAccel  float64 // m/s², positive left
	slip      float64 // rear wheel slip, %
	traction  bool    // traction control intervening
	distance  float64 // m since the start
	pitchRate float64 // °/s
	rollRate  float64 // °/s

	// Powertrain.
	torqueCmd, torque float64 // Nm
	rpm               float64
	pMech, pElec      float64 // W, shaft and DC side
	regen             bool

	// Battery.
	soc        float64            // 0–1
	cellOffset [cellCount]float64 // V, each cell's open-circuit deviation
	cellR      [cellCount]float64 // Ω, each cell's resistance
	cell       [cellCount]float64 // V
	packV      float64
	packI      float64 // A, positive discharging
	usedWh     float64
	regenWh    float64

	// Thermal, °C, and the cooling loop.
	ambient, coolIn, coolOut, stator, igbt, gateDrv, board float64
	battery, dcdc, ecu, tyre                               float64
	pump, fan, flow                                        float64 // %, %, l/min
	lvCurrent                                              float64 // A from the DC/DC
}

// segment is one stretch of the drive scenario's course.
type segment struct {
	dur   float64 // s
	speed float64 // target speed, m/s
	steer float64 // peak steering wheel angle, degrees, positive left
	lap   bool    // the lap line is at the start of this segment
}

// Fixed slowly-moving quantities at the start of every capture.
const (
	startSOC       = 0.78
	startOdometer  = 1523.47 // km
	startTrip      = 12.85   // km
	startHours     = 87.3    // h
	startUptime    = 412.0   // s since the VCU booted
	startUsedWh    = 1234.0
	startRegenWh   = 87.0
	soh            = 96.5 // %
	cycleCount     = 143
	avgConsumption = 95.0 // Wh/km
)

// newWorld builds the world of a scenario at time zero. seconds is the
// capture's length, which the drive scenario plans its course for.
func newWorld(sc Scenario, seed int64, seconds float64) *world {
	w := &world{r: newRNG(seed, "world"), soc: startSOC, ambient: 19.4}
	w.gear, w.gearRequest = gearN, gearN
	w.driveMode, w.modeRequest = modeNormal, modeNormal
	w.vehicleState = vehicleReady
	for i := range w.cellOffset {
		w.cellOffset[i] = 0.004 * w.r.norm()
		w.cellR[i] = cellResistance * (1 + 0.1*w.r.norm())
	}
	if sc == Drive {
		w.plan = planCourse(&w.r, seconds)
	}
	// Start every temperature a little above where it settles: the kart
	// was driven before it was parked, so it cools slowly.
	w.physics(0)
	w.thermalEquilibrium()
	for _, p := range []*float64{&w.coolIn, &w.stator, &w.igbt, &w.gateDrv, &w.board, &w.battery, &w.dcdc, &w.ecu, &w.tyre} {
		*p += w.r.uniform(0.2, 1.2)
	}
	w.coolOut = w.coolIn + w.coolantRise()
	w.physics(0)
	return w
}

// planCourse lays out a kart track driven lap after lap: a standing
// start, then straights and corners of random length, speed and
// direction, a lap every six segments.
func planCourse(r *rng, seconds float64) []segment {
	plan := []segment{{dur: 4}} // parked, motor idling
	total := 4.0
	for i := 0; total < seconds+10; i++ {
		var s segment
		if i%2 == 0 {
			s = segment{dur: r.uniform(4, 8), speed: r.uniform(60, 80) / 3.6}
		} else {
			s = segment{dur: r.uniform(2.5, 4.5), speed: r.uniform(28, 42) / 3.6, steer: r.uniform(35, 75)}
			if r.float() < 0.5 {
				s.steer = -s.steer
			}
		}
		s.lap = i%6 == 0
		plan = append(plan, s)
		total += s.dur
	}
	return plan
}

// advance steps the world up to t seconds.
func (w *world) advance(t float64) {
	for {
		next := float64(w.steps+1) * stepSeconds
		if next > t {
			return
		}
		w.steps++
		w.t = next
		w.driver()
		w.physics(stepSeconds)
	}
}

// driver sets the inputs for the current time: idle scenario or the
// drive scenario's course.
func (w *world) driver() {
	if w.plan == nil {
		return // idle: parked in neutral, motor idling, nobody touching anything
	}
	for w.seg < len(w.plan)-1 && w.t >= w.segStart+w.plan[w.seg].dur {
		w.segStart += w.plan[w.seg].dur
		w.seg++
		if w.plan[w.seg].lap {
			w.laps++
		}
	}
	s := w.plan[w.seg]
	into := w.t - w.segStart

	// Rare state changes: select D just before pulling away, and switch
	// to Sport when the third lap starts. The dashboard request comes
	// first, the VCU follows a moment later.
	if w.t >= 3.0 {
		w.gearRequest = gearD
	}
	if w.t >= 3.2 {
		w.gear, w.vehicleState = gearD, vehicleDrive
	}
	if w.laps >= 3 && w.modeRequest != modeSport {
		w.modeRequest, w.modeAt = modeSport, w.t+0.25
	}
	if w.modeRequest != w.driveMode && w.t >= w.modeAt {
		w.driveMode = w.modeRequest
	}
	w.lapButton = s.lap && into < 0.4

	// A simple driver: throttle towards the target speed, brake hard
	// when too fast, steer a half sine through the corners.
	target := s.speed
	var throttle, brake float64
	if w.seg > 0 {
		switch e := target - w.speed; {
		case e > 0:
			throttle = clamp(0.35*e+0.25, 0, 1)
		case e < -1:
			brake = clamp(-0.3*e, 0, 1)
		default:
			throttle = 0.2
		}
	}
	w.throttle = rateLimit(w.throttle, throttle, 4*stepSeconds)
	w.brake = rateLimit(w.brake, brake, 6*stepSeconds)
	// On the straights the driver still corrects a little.
	steer := 0.0
	if w.speed > 0 {
		steer = 1.5*math.Sin(0.9*w.t) + 0.8*math.Sin(2.3*w.t+1)
	}
	if s.steer != 0 {
		steer += s.steer * math.Sin(math.Pi*into/s.dur)
	}
	w.steerRate = (steer - w.steer) / stepSeconds
	w.steer = steer
}

// physics integrates motion, powertrain, battery and temperatures over
// dt seconds (dt = 0 only settles the derived quantities).
func (w *world) physics(dt float64) {
	w.torqueStep(dt)
	w.motion(dt)
	w.motorPower()
	aux := w.lowVoltage()
	w.packStep(dt, aux)
	// Temperatures approach where the current losses would settle them.
	if dt > 0 {
		w.thermalStep(dt)
	}
}

// torqueStep sets the torque: the VCU's request, capped by the
// inverter's power limits and traction control, then the motor
// following it over dt.
func (w *world) torqueStep(dt float64) {
	switch {
	case w.gear != gearD:
		w.torqueCmd = idleTorque
	case w.brake > 0 && w.speed > 1.5:
		w.torqueCmd = -math.Min(regenLimit, 2*w.brake*regenLimit)
	default:
		mode := 1.0
		if w.driveMode == modeSport {
			mode = 1.15
		}
		w.torqueCmd = w.throttle * torqueMax * mode
	}
	// The inverter's power limits, which cap torque at speed.
	if omega := w.speed / wheelRadius * gearRatio; w.gear == gearD && omega > 1 {
		w.torqueCmd = clamp(w.torqueCmd, -regenPowerMax/omega, powerMax/omega)
	}
	drive := w.torqueCmd * gearRatio / wheelRadius / massKg // m/s² the torque asks for
	w.slip, w.traction = 0, false
	if w.gear == gearD && drive > 8 && w.speed < 12 {
		w.slip = math.Min(20, (drive-8)*3)
		w.traction = w.slip > 4
		if w.traction {
			w.torqueCmd *= 0.85
		}
	}
	if dt > 0 {
		w.torque += (w.torqueCmd - w.torque) * math.Min(1, dt/0.02)
	} else {
		w.torque = w.torqueCmd
	}
	w.regen = w.torque < -0.5
}

// motion moves the car over dt: speed and distance, yaw, lateral
// acceleration, roll and pitch.
func (w *world) motion(dt float64) {
	if w.gear == gearD {
		f := w.torque*gearRatio/wheelRadius - w.brake*brakeMax*gravity*massKg
		drag := 0.5*1.2*0.6*w.speed*w.speed + 0.015*massKg*gravity
		w.accel = (f - drag) / massKg
		w.speed += w.accel * dt
		if w.speed <= 0 {
			w.speed, w.accel = 0, 0
		}
	}
	w.distance += w.speed * dt
	tyreAngle := w.steer / steeringRatio * math.Pi / 180
	yaw := w.speed * math.Tan(tyreAngle) / wheelbase // rad/s
	if lat := w.speed * yaw; math.Abs(lat) > 16 {
		yaw *= 16 / math.Abs(lat) // the tyres give up: understeer
	}
	prevLat := w.latAccel
	w.yawRate = yaw * 180 / math.Pi
	w.latAccel = w.speed * yaw
	if dt > 0 {
		w.rollRate = 0.15 * (w.latAccel - prevLat) / dt
	}
	w.pitchRate = -0.02 * w.accel * math.Min(1, w.speed)
}

// motorPower sets the motor's speed and its mechanical and electrical
// power.
func (w *world) motorPower() {
	if w.gear == gearD {
		w.rpm = w.speed / wheelRadius * gearRatio * 60 / (2 * math.Pi)
	} else {
		w.rpm = idleRPM
	}
	omega := w.rpm * 2 * math.Pi / 60
	w.pMech = w.torque * omega
	if w.pMech >= 0 {
		w.pElec = w.pMech/0.92 + 120
	} else {
		w.pElec = w.pMech*0.85 + 120
	}
}

// lowVoltage sets the cooling (pump, fan, flow) and the low-voltage
// current the DC/DC feeds, and returns the power it draws from the
// pack, W.
func (w *world) lowVoltage() (aux float64) {
	w.pump = clamp(35+5*(w.coolOut-35), 35, 100)
	w.fan = clamp(10*(w.coolOut-40), 0, 100)
	w.flow = 0.18 * w.pump
	w.lvCurrent = 8.2 + 0.02*(w.pump-35) + 0.06*w.fan
	return lvVoltage * w.lvCurrent / 0.9
}

// packStep draws the power of the motor and aux from the pack over dt:
// cells at their open-circuit voltage less the drop of the previous
// step's current, the state of charge, the energy used and regenerated.
func (w *world) packStep(dt, aux float64) {
	w.packV = cmp.Or(w.packV, cellCount*(ocvEmpty+ocvSpan*w.soc))
	w.packI = (w.pElec + aux) / w.packV
	w.soc -= w.packI * dt / 3600 / packCapacityAh
	ocv := ocvEmpty + ocvSpan*w.soc
	w.packV = 0
	for i := range w.cell {
		w.cell[i] = ocv + w.cellOffset[i] - w.packI*w.cellR[i]
		w.packV += w.cell[i]
	}
	if p := w.packV * w.packI; p > 0 {
		w.usedWh += p * dt / 3600
	}
	if w.pElec < 0 {
		w.regenWh -= w.pElec * dt / 3600
	}
}

// losses returns the motor's and the inverter's heat, W.
func (w *world) losses() (motor, inverter float64) {
	return 0.08*math.Abs(w.pMech) + 60, 0.04*math.Abs(w.pElec) + 5
}

// thermalTargets returns where each temperature would settle at the
// current load.
func (w *world) thermalTargets() (coolIn, stator, igbt, gateDrv, board, battery, dcdc, ecu, tyre float64) {
	motor, inverter := w.losses()
	loss := (motor + inverter) / 1000
	coolIn = w.ambient + 8.5 + 0.9*loss
	stator = w.coolOut + 8 + 0.025*(motor-60)
	igbt = w.coolIn + 5 + 0.02*inverter
	gateDrv = 0.5*w.igbt + 0.5*w.ambient + 9.5
	board = w.ambient + 19
	battery = w.ambient + 6 + 0.004*w.packI*w.packI*cellCount*cellResistance
	dcdc = w.ambient + 15 + 0.3*w.lvCurrent
	ecu = w.ambient + 25.6
	tyre = w.ambient + 3 + 0.25*w.speed*3.6 + 0.8*math.Abs(w.latAccel)
	return
}

// thermalEquilibrium sets every temperature to where it settles.
func (w *world) thermalEquilibrium() {
	for range 3 { // the targets depend on each other; three passes settle them
		w.coolIn, w.stator, w.igbt, w.gateDrv, w.board, w.battery, w.dcdc, w.ecu, w.tyre = w.thermalTargets()
		w.coolOut = w.coolIn + w.coolantRise()
	}
}

// coolantRise returns how much the coolant warms through motor and
// inverter: ΔT = P / (ṁ c).
func (w *world) coolantRise() float64 {
	motor, inverter := w.losses()
	flow := math.Max(w.flow, 1)
	return (motor + inverter) / 1000 * 14.35 / flow
}

// thermalStep moves each temperature towards its target with its own
// time constant.
func (w *world) thermalStep(dt float64) {
	coolIn, stator, igbt, gateDrv, board, battery, dcdc, ecu, tyre := w.thermalTargets()
	approach := func(x *float64, target, tau float64) { *x += (target - *x) * dt / tau }
	approach(&w.coolIn, coolIn, 300)
	approach(&w.coolOut, w.coolIn+w.coolantRise(), 5)
	approach(&w.stator, stator, 200)
	approach(&w.igbt, igbt, 15)
	approach(&w.gateDrv, gateDrv, 60)
	approach(&w.board, board, 300)
	approach(&w.battery, battery, 900)
	approach(&w.dcdc, dcdc, 200)
	approach(&w.ecu, ecu, 600)
	approach(&w.tyre, tyre, 120)
}

// Derived readings shared by several signals.

// kmh returns the vehicle speed in km/h.
func (w *world) kmh() float64 { return w.speed * 3.6 }

// wheel returns a wheel's speed in km/h: the inner wheels of a corner
// turn slower, the rear ones faster when they slip.
func (w *world) wheel(left, rear bool) float64 {
	v := w.speed - 0.5*track*w.yawRate*math.Pi/180
	if !left {
		v = w.speed + 0.5*track*w.yawRate*math.Pi/180
	}
	if rear {
		v *= 1 + w.slip/100
	}
	return math.Max(0, v*3.6)
}

// cellExtremes returns the lowest and highest cell voltage and their
// 1-based cell numbers.
func (w *world) cellExtremes() (lo, hi float64, loIdx, hiIdx int) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for i, v := range w.cell {
		if v < lo {
			lo, loIdx = v, i+1
		}
		if v > hi {
			hi, hiIdx = v, i+1
		}
	}
	return lo, hi, loIdx, hiIdx
}

// remainingWh returns the usable energy left in the pack.
func (w *world) remainingWh() float64 {
	return w.soc * packCapacityAh * soh / 100 * cellCount * (ocvEmpty + ocvSpan/2)
}

// consumption returns the average consumption the VCU displays, Wh/km:
// the long-term figure, pulled towards this drive's once it is long
// enough to count.
func (w *world) consumption() float64 {
	km := w.distance / 1000
	if km < 0.5 {
		return avgConsumption
	}
	recent := (w.usedWh - w.regenWh) / km
	k := math.Min(1, km/20)
	return avgConsumption*(1-k) + recent*k
}

// tyrePressure returns a tyre's pressure, bar, from its cold pressure
// and the tyres' temperature (Gay-Lussac).
func (w *world) tyrePressure(cold float64) float64 {
	return cold * (w.tyre + 273.15) / (20 + 273.15)
}

func clamp(x, lo, hi float64) float64 { return math.Max(lo, math.Min(hi, x)) }

// rateLimit moves x towards target by at most step.
func rateLimit(x, target, step float64) float64 {
	return x + clamp(target-x, -step, step)
}
