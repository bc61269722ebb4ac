package pipeline

import "testing"

func TestHousekeepingName(t *testing.T) {
	for _, c := range []struct{ name, want string }{
		{"CHECKSUM", "checksum"}, {"Checksum", "checksum"}, {"IF_chksum", "checksum"},
		{"CRC8_STAT1", "checksum"}, {"SCCM_leftStalkCrc", "checksum"}, {"Checksum1D8", "checksum"},
		{"DIR_crc", "checksum"}, {"VCU_TorqueChecksum", "checksum"}, {"FC_infoBootCRC", "checksum"},
		{"COUNTER", "counter"}, {"Counter", "counter"}, {"MOT_StatusCounter", "counter"},
		{"ALIVE", "counter"}, {"alive_cnt", "counter"}, {"RC", "counter"}, {"MSG_RC", "counter"},
		{"EPBRinternalStatusCounter228", "counter"}, {"S07CNT", "counter"}, {"Counter_STAT2", "counter"},
		{"RollingCntr", "counter"}, {"ESP_CHECKSUM_COUNTER", "checksum"},
		{"SOURCE", ""}, {"ARC_ANGLE", ""}, {"RCM_yawRate", ""}, {"ErrCount", ""}, {"VSC08SUM", ""},
		{"CARCOUNT", ""}, {"Circuit", ""}, {"ENCOUNTERED", ""}, {"ACCEL_X", ""}, {"", ""},
		{"SPEED", ""}, {"SRC_ADDR", ""}, {"CRCX", ""},
	} {
		if got := HousekeepingName(c.name); got != c.want {
			t.Errorf("HousekeepingName(%q) = %q, want %q", c.name, got, c.want)
		}
	}
}

func FuzzHousekeepingName(f *testing.F) {
	for _, s := range []string{"CHECKSUM", "EPBRinternalStatusCounter228", "é_Crc", "\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		switch HousekeepingName(s) {
		case "", "checksum", "counter":
		default:
			t.Fatalf("HousekeepingName(%q): not a kind", s)
		}
	})
}
