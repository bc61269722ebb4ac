package cli

import (
	"context"
	"flag"
	"strings"

	"github.com/yukart/candec/dbc"
	"github.com/yukart/candec/internal/cmdkit/decodejob"
	"github.com/yukart/candec/internal/lab/cardata"
)

// BuiltInDBCHelp ends the help of a --dbc flag whose default is the
// car's DBC.
const BuiltInDBCHelp = "; where the default file is missing, the car's DBC built into candec"

// carDBC adds --dbc to fs, whose default is the car's DBC: the file
// cardata.DBCFile, or its copy built into candec where the file is
// missing (outside a clone).
func carDBC(fs *flag.FlagSet, usage string) *string {
	return fs.String("dbc", cardata.DBCFile, usage+BuiltInDBCHelp)
}

// carDBCFiles returns the files of carDBC's flag in fs, whose value is
// list; builtIn says that the built-in copy stands in for them instead,
// as it does when the flag was not given and its default is missing.
// The files are then nil: none on disk is an input.
func carDBCFiles(fs *flag.FlagSet, list []string) (files []string, builtIn bool) {
	given := false
	fs.Visit(func(f *flag.Flag) { given = given || f.Name == "dbc" })
	if !given && cardata.Missing(cardata.DBCFile) {
		return nil, true
	}
	return list, false
}

// loadCarDBC loads files, or the built-in copy of the car's DBC when
// builtIn (see carDBCFiles). name is what was loaded, for messages.
func loadCarDBC(ctx context.Context, files []string, builtIn bool) (db *dbc.Database, name string, err error) {
	if builtIn {
		db, err := cardata.LoadDBC()
		return db, cardata.DBCName, err
	}
	db, err = dbc.LoadContext(ctx, files...)
	return db, strings.Join(files, ","), err
}

// CarDBCFlag is a --dbc (dbc.BusFiles) whose default is the car's DBC:
// the file cardata.DBCFile, or its copy built into candec where the
// file is missing (outside a clone). A --dbc given replaces the default.
type CarDBCFlag struct {
	files dbc.BusFiles
	given bool
}

// CarDBCVar adds --dbc to fs, a carDBCFlag.
func CarDBCVar(fs *flag.FlagSet) *CarDBCFlag {
	f := &CarDBCFlag{files: dbc.BusFiles{All: []string{cardata.DBCFile}}}
	fs.Var(f, "dbc", DBCHelp+BuiltInDBCHelp)
	return f
}

func (f *CarDBCFlag) String() string {
	if f == nil {
		return ""
	}
	return f.files.String()
}

func (f *CarDBCFlag) Set(v string) error {
	if !f.given {
		f.files, f.given = dbc.BusFiles{}, true
	}
	return f.files.Set(v)
}

// builtIn says that the built-in copy of the car's DBC stands in for
// the files: --dbc was not given and its default is missing.
func (f *CarDBCFlag) builtIn() bool { return !f.given && cardata.Missing(cardata.DBCFile) }

// Inputs are the files named, which no output may be: none when the
// built-in copy stands in.
func (f *CarDBCFlag) Inputs() []string {
	if f.builtIn() {
		return nil
	}
	return f.files.Files()
}

// Load loads the DBCs of f (dbc.LoadBuses) and returns what chooses,
// for a command that decodes with one database, the frames each
// interface's DBC decodes; name is what was loaded, for messages.
func (f *CarDBCFlag) Load(ctx context.Context) (sel *decodejob.Selector, name string, err error) {
	b := &dbc.Buses{}
	if f.builtIn() {
		if b.All, err = cardata.LoadDBC(); err != nil {
			return nil, "", err
		}
		name = cardata.DBCName
	} else {
		if b, err = dbc.LoadBuses(ctx, f.files); err != nil {
			return nil, "", err
		}
		name = f.files.String()
	}
	sel, err = decodejob.NewSelector(b)
	return sel, name, err
}
