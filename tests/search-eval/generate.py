#!/usr/bin/env python3
"""Writes the memory-search evaluation set: corpus/convNN/session_MM.md (10 synthetic
multi-session conversations between two people, 25 sessions each, one memory file per
session) and corpus/questions.jsonl (one natural question per specific fact, with the one
session file that answers it).

Deterministic (fixed seed, Python 3.11 standard library only): running it again rewrites the
same bytes.

    python3 tests/search-eval/generate.py

Every session mixes small talk that recurs across sessions (the speakers' names, family,
work, weather, hobbies in general: distractors) with a few specific facts (an activity and
its object, a place, a bought object, a person, a date or time). Each fact's identifying
phrase is checked to occur in exactly one file of its conversation. The questions are
phrased as a person asks them, and the answering text often uses other word forms
(paint/painted, hiking/hiked, puppy/pup), sometimes synonyms (coworker/colleague,
wedding/getting married), so that exact-word search finds many but not all answers.
"""
import json
import os
import random
import re
import shutil
from datetime import date, timedelta

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "corpus")
rng = random.Random(2028)

CONVERSATIONS = 10
SESSIONS = 25

# The generator's own stop list: content_words is the question without these.
STOP = set("""a an the is are was were be been being am do does did doing done what when where
who whom whose which why how to of in on at for with by from and or but his her hers their
theirs its it my your our i you he she they we me him them this that these those has have had
go went going ever about tell kind any some there here as into so than then just up out new
get got""".split())

SPEAKERS = [
    ("Melanie", "f"), ("Caroline", "f"), ("John", "m"), ("Maria", "f"), ("Dev", "m"),
    ("Priya", "f"), ("Tom", "m"), ("Lucas", "m"), ("Hannah", "f"), ("Omar", "m"),
    ("Grace", "f"), ("Ethan", "m"), ("Sofia", "f"), ("Marcus", "m"), ("Yuki", "f"),
    ("Ben", "m"), ("Leila", "f"), ("Diego", "m"), ("Nora", "f"), ("Sam", "m"),
]
# Other people (coworkers, friends, kids, partners): never a speaker's name.
PEOPLE = """Aiden Alice Amelia Arthur Beatrice Caleb Chloe Clara Daniel Daphne Elena Elliot Emma
Felix Fiona Gabriel Gemma Harvey Ines Isaac Ivy Jasper Julia Kai Kira Leo Lena Luna Mason
Mila Miles Nadia Nathan Olive Oscar Paige Pablo Quinn Rosa Ruby Rupert Sadie Simon Stella
Theo Tessa Victor Violet Wes Willa Xavier Yara Zane Zoe Hugo Iris Jonah Keira Levi Maeve
Nico Opal Petra Reid Selma Tobias Una Vera Wren Abel Adele Anika Bruno Camila Cyrus Dalia
Dominic Edith Emil Esme Farah Flynn Greta Hector Hollis Ingrid Jada Joel Kasper Lara Linus
Lorenzo Magnus Margot Milo Nell Orla Otis Penny Rafael Remy Rhea Rohan Saoirse Silas Talia
Tariq Uma Vivian Wanda Yusuf Zara Anton Bianca Cedric Delia Enzo Freya Gideon Helena Ilya
Jonas Kenji Lucia Mateo Noemi Pia Ronan""".split()
PET_NAMES = """Biscuit Pepper Mochi Fudge Waffles Ziggy Noodle Pickle Maple Rocket Bean Sushi
Turbo Clover Peanut Juniper Bingo Sprout Nacho Poppy Toffee Banjo Gizmo Hazel""".split()

TIME_PHRASES = ["last Saturday", "on Sunday morning", "yesterday", "the other day",
                "two weeks ago", "over the long weekend", "last night", "on my day off",
                "last Friday evening", "this morning", "a few days ago", "last weekend"]

# Hobbies: base, past, gerund, and objects (the question's short name, the answer's phrase).
HOBBIES = {
    "paint": ("painted", "painting", [
        ("sunrise", "a sunrise over the lake"), ("lighthouse", "the old lighthouse on the cape"),
        ("portrait", "a portrait of my grandmother"), ("sunflowers", "a field of sunflowers"),
        ("harbor", "the harbor at dusk"), ("mural", "a mural in the kids' room"),
        ("fox", "a little red fox"), ("waterfall", "a waterfall from a photo I took"),
        ("barn", "an old red barn"), ("self-portrait", "a self-portrait in oils")]),
    "bake": ("baked", "baking", [
        ("sourdough", "a sourdough loaf"), ("lemon tart", "a lemon tart"),
        ("carrot cake", "a carrot cake"), ("croissants", "a batch of croissants"),
        ("apple pie", "an apple pie"), ("baguette", "two baguettes"),
        ("brownies", "a tray of brownies"), ("cinnamon rolls", "cinnamon rolls"),
        ("focaccia", "rosemary focaccia"), ("macarons", "pistachio macarons")]),
    "knit": ("knitted", "knitting", [
        ("scarf", "a striped scarf"), ("sweater", "a wool sweater"),
        ("mittens", "a pair of mittens"), ("blanket", "a baby blanket"),
        ("beanie", "a beanie with a pompom"), ("socks", "some cable socks")]),
    "build": ("built", "building", [
        ("birdhouse", "a birdhouse"), ("bookshelf", "a bookshelf for the hallway"),
        ("treehouse", "a treehouse"), ("bench", "a garden bench"),
        ("chicken coop", "a chicken coop"), ("raised bed", "a raised bed for vegetables")]),
    "plant": ("planted", "planting", [
        ("tomatoes", "three rows of tomato plants"), ("roses", "climbing roses"),
        ("tulips", "a hundred tulip bulbs"), ("apple tree", "a little apple tree"),
        ("herbs", "an herb garden with basil and thyme"), ("lavender", "lavender by the fence")]),
    "sew": ("sewed", "sewing", [
        ("quilt", "a patchwork quilt"), ("dress", "a summer dress"),
        ("curtains", "new curtains"), ("tote bag", "a canvas tote bag"),
        ("costume", "a dinosaur costume")]),
    "carve": ("carved", "carving", [
        ("spoon", "a wooden spoon"), ("pumpkin", "a pumpkin"),
        ("chess set", "a chess set"), ("walking stick", "a walking stick")]),
    "draw": ("drew", "drawing", [
        ("comic", "a comic strip"), ("map", "a map of our neighborhood"),
        ("dragon", "a dragon for my nephew"), ("skyline", "the city skyline")]),
    "photograph": ("photographed", "photographing", [
        ("heron", "a great blue heron"), ("northern lights", "the northern lights"),
        ("eclipse", "the eclipse"), ("owl", "a barn owl")]),
}
FIX_OBJECTS = [("bike", "bicycle"), ("dishwasher", "dishwasher"), ("fence", "fence"),
               ("lawn mower", "mower"), ("faucet", "kitchen tap"), ("laptop", "laptop")]

# Outings: base, gerund, past, preposition before the place.
OUTINGS = [("hike", "hiking", "hiked up", "up"), ("camp", "camping", "camped at", "at"),
           ("fish", "fishing", "fished at", "at"), ("kayak", "kayaking", "kayaked on", "on"),
           ("ski", "skiing", "skied at", "at"), ("climb", "climbing", "climbed at", "at"),
           ("cycle", "cycling", "cycled around", "around"), ("swim", "swimming", "swam at", "at"),
           ("surf", "surfing", "surfed at", "at"), ("run", "running", "ran along", "along")]
COMPANIONS = [("brother", "brother"), ("sister", "sister"), ("dad", "father"),
              ("mom", "mother"), ("cousin", "cousin"), ("best friend", "best friend"),
              ("neighbor", "neighbor"), ("uncle", "uncle"), ("coworkers", "colleagues"),
              ("husband", "hubby"), ("wife", "wife"), ("roommate", "roommate")]
PLACES = """Mount Tamalpais|Bear Lake|Pinecrest Ridge|Cedar Falls|Silver Creek|Eagle Rock|
Lake Tahoe|Big Sur|Moab|Whistler|Half Moon Bay|Joshua Tree|Yosemite|Cape Cod|Lake Louise|
the Smoky Mountains|Zion|Acadia|Crater Lake|Mount Rainier|Hood Canal|Point Reyes|Stinson Beach|
Lake Placid|the Catskills|Mount Hood|Bryce Canyon|Olympic Park|Sedona|the Adirondacks|
Santa Cruz|Glacier Point|Lake Geneva|Red River Gorge|Shenandoah|the Outer Banks|Mammoth|
Jackson Hole|Banff|Tofino|Bodega Bay|Kings Canyon|Muir Woods|Devil's Lake|Table Rock|
Mount Washington|Sleeping Bear Dunes|Blue Ridge|Hocking Hills|Starved Rock""".replace("\n", "").split("|")

ITEMS = [("bike", "bicycle"), ("couch", "sofa"), ("car", "hatchback"), ("laptop", "laptop"),
         ("camera", "camera"), ("guitar", "guitar"), ("sneakers", "running shoes"),
         ("jacket", "rain jacket"), ("watch", "watch"), ("lamp", "floor lamp"), ("rug", "rug"),
         ("telescope", "telescope"), ("espresso machine", "coffee machine"), ("tent", "tent"),
         ("backpack", "backpack"), ("headphones", "headphones"), ("e-reader", "kindle"),
         ("desk", "standing desk"), ("blender", "blender"), ("scooter", "scooter")]
COLORS = ["teal", "mustard yellow", "navy blue", "burgundy", "forest green", "bright orange",
          "lavender", "charcoal grey", "cream", "cherry red", "turquoise", "olive green"]
SHOPS = ["a flea market", "a garage sale downtown", "the outlet mall", "a thrift store on Elm Street",
         "a shop in Chinatown", "an estate sale", "the hardware store", "a pop-up market",
         "a secondhand shop near the station", "the farmers market"]
BUY_PAST = ["bought", "got", "picked up", "ordered", "splurged on", "finally bought"]

EVENTS = ["book club", "wedding", "conference", "dog park", "yoga class", "farmers market",
          "high school reunion", "gym", "pottery workshop", "charity run", "birthday party",
          "climbing gym", "choir rehearsal", "neighborhood barbecue", "art fair"]
JOBS = ["nurse", "architect", "pastry chef", "firefighter", "veterinarian", "pilot",
        "software engineer", "high school teacher", "dentist", "electrician", "journalist",
        "park ranger", "accountant", "marine biologist", "translator", "physiotherapist"]
COMPANIES = ["a startup in Austin", "the city hospital", "a design studio", "the public library",
             "a bakery chain", "a solar company", "the local newspaper", "a shipping firm"]
WEDDING_RELS = ["sister", "brother", "cousin", "best friend", "aunt", "college roommate"]
MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August",
          "September", "October", "November", "December"]
WEEKDAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
COURSES = [("pottery", "pottery"), ("salsa", "salsa dancing"), ("spanish", "Spanish"),
           ("photography", "photography"), ("yoga", "yoga"), ("woodworking", "woodworking"),
           ("cooking", "cooking"), ("swimming", "swim"), ("improv", "improv"),
           ("watercolor", "watercolor"), ("boxing", "boxing"), ("ceramics", "ceramics")]
APPOINTMENTS = [("dentist appointment", "dentist"), ("job interview", "interview"),
                ("flight to Denver", "plane to Denver"), ("doctor's appointment", "checkup"),
                ("driving test", "driving test"), ("flight to Lisbon", "plane to Lisbon"),
                ("haircut", "hair appointment"), ("parent-teacher conference", "meeting with the teacher")]
CLOCK = ["7:30", "8:15", "9:00", "10:45", "noon", "1:30", "2:15", "3:40", "4:00", "5:30", "6:45"]
INSTRUMENTS = ["cello", "ukulele", "piano", "violin", "saxophone", "drums", "banjo", "harp",
               "trumpet", "accordion", "flute", "mandolin"]
LANGUAGES = ["Portuguese", "Japanese", "Italian", "Korean", "German", "Arabic", "Greek",
             "Mandarin", "Swahili", "Dutch", "Turkish", "Polish"]
BOOKS = ["The Salt Orchard", "A River of Glass", "Nine Lanterns", "The Quiet Cartographer",
         "Letters from Karoo", "The Paper Tide", "Winter at Hollow Pines", "The Clockmaker's Wife",
         "Under the Copper Sky", "The Last Ferry", "Small Gods of August", "The Honey Thief",
         "Maps of Forgotten Rivers", "The Lantern Keeper", "Birds of Passage", "The Glass Meridian"]
MOVIES = ["Midnight Harbor", "The Long Orbit", "Paper Kites", "Iron Valley", "Starfall Station",
          "The Velvet Heist", "Echoes of Autumn", "Desert Bloom", "The Tin Soldier",
          "Neon Rain", "Summer of the Comet", "The Ninth Key", "Wild Marigold", "Red Alder"]
BANDS = ["the Lumineers", "Fleet Foxes", "Arctic Monkeys", "Coldplay", "Florence and the Machine",
         "the Black Keys", "Vampire Weekend", "Tame Impala", "Mumford and Sons", "Haim",
         "Bon Iver", "the National", "Alabama Shakes", "Khruangbin"]
VENUES = ["the Fillmore", "Red Rocks", "the Greek Theatre", "a tiny club downtown",
          "the county fairgrounds", "Madison Square Garden", "the Hollywood Bowl", "the Ryman"]
CITIES = ["Seattle", "Boston", "Chicago", "Denver", "Portland", "Austin", "Nashville",
          "Toronto", "Vancouver", "Dublin", "Berlin", "Lisbon", "Melbourne", "Barcelona",
          "Copenhagen", "Kyoto", "Montreal", "Edinburgh", "Prague", "Vienna"]
DISHES = ["lasagna", "paella", "beef stew", "mushroom risotto", "chicken curry", "pad thai",
          "shrimp tacos", "ramen", "gnocchi", "tamales", "moussaka", "pho", "dumplings",
          "jambalaya", "shakshuka", "enchiladas"]
SPORTS = ["soccer", "basketball", "swim", "lacrosse", "volleyball", "baseball", "hockey",
          "tennis", "gymnastics", "water polo", "track", "chess"]
VOLUNTEER = ["animal shelter", "food bank", "community garden", "soup kitchen",
             "children's hospital", "public library", "homeless shelter", "wildlife rescue"]
PRIZES = [("chili cook-off", "chili"), ("county fair", "pumpkin pie"), ("photo contest", "heron photo"),
          ("pub quiz", "trivia team"), ("talent show", "magic act"), ("science fair", "volcano"),
          ("bake sale", "banana bread"), ("chess tournament", "opening")]
LOST = [("wallet", "wallet"), ("sunglasses", "sunglasses"), ("keys", "keys"),
        ("phone", "phone"), ("wedding ring", "ring"), ("passport", "passport"),
        ("umbrella", "umbrella"), ("earbuds", "earbuds")]
LOST_PLACES = ["the airport", "the beach", "the movie theater", "the train station",
               "the zoo", "the water park", "the stadium", "the museum", "the ferry"]
GIFTS = ["a record player", "a pottery wheel", "a telescope", "a weekend in Napa", "a drone",
         "a cast iron pan", "a massage voucher", "a vintage typewriter", "concert tickets",
         "a hammock", "a bread maker", "a kayak paddle"]
BREEDS = [("puppy", "pup", "dog", ["beagle", "corgi", "golden retriever", "dachshund",
                                   "border collie", "husky", "labrador", "poodle", "shiba inu",
                                   "greyhound", "pug", "dalmatian"]),
          ("kitten", "kitty", "cat", ["maine coon", "siamese", "ragdoll", "bengal", "sphynx",
                                      "persian", "tabby", "burmese"])]
TRIPS = ["Iceland", "Peru", "Morocco", "Vietnam", "New Zealand", "Croatia", "Costa Rica",
         "Norway", "Japan", "Portugal", "Greece", "Scotland", "Mexico City", "Bali", "Chile"]

HOBBY_GERUNDS = [h[1] for h in HOBBIES.values()] + [o[1] for o in OUTINGS]


class Conversation:
    """One pair of speakers and what they talk about."""

    def __init__(self, index, a, b, people):
        self.index = index
        self.speakers = [a, b]
        self.people = people  # kids, partners, friends (recurring names)
        self.family = {a[0]: {"partner": people[0], "kid": people[1]},
                       b[0]: {"partner": people[2], "kid": people[3]}}
        self.others = people[4:]
        threads = rng.sample(THREADS, 4)
        self.threads = {a[0]: threads[:2], b[0]: threads[2:]}
        self.used = set()
        self.uniques = []  # (phrase, file) that must occur in exactly one file

    def other(self, name):
        return self.speakers[1] if self.speakers[0][0] == name else self.speakers[0]

    def take(self, pool, key):
        """A value of pool not used yet in this conversation under key."""
        free = [v for v in pool if (key, str(v)) not in self.used]
        if not free:
            return None
        v = rng.choice(free)
        self.used.add((key, str(v)))
        return v


def his(gender):
    return "his" if gender == "m" else "her"


def cap(s):
    return s[0].upper() + s[1:]


def pick(*options):
    return rng.choice(options)


# Each fact maker gets (conversation, speaker name, gender, other speaker name) and returns
# (turns, question, unique phrase) or None when its pool is exhausted. Turns are
# (speaker, text) pairs.

def fact_hobby(c, p, g, o):
    verb = rng.choice(list(HOBBIES))
    past, ger, objs = HOBBIES[verb]
    obj = c.take(objs, "hobby-" + verb)
    if obj is None:
        return None
    short, long = obj
    t = rng.choice(TIME_PHRASES)
    art = "" if short.endswith("s") and short not in ("mittens",) or short in ("sourdough", "lavender") else ("an " if short[0] in "aeiou" else "a ")
    if short in ("mittens", "socks", "curtains", "tomatoes", "roses", "tulips", "herbs", "sunflowers",
                 "croissants", "brownies", "cinnamon rolls", "macarons", "northern lights"):
        art = "some " if verb != "photograph" else "the "
    if short in ("eclipse", "harbor", "skyline"):
        art = "the "
    q = pick(f"When did {p} {verb} {art}{short}?",
             f"When did {p} {verb} {art}{short}?",
             f"How did {p}'s {short} turn out?",
             f"Did {p} ever finish {ger} the {short}?",
             f"When was {p} {ger} {art}{short}?")
    turns = pick(
        [(p, f"{cap(t)} I {past} {long}. {pick('It came out better than I expected.', 'Not perfect, but I love it.', 'Took me hours!', 'My family keeps teasing me about it.')}")],
        [(o, pick("What have you been up to?", "Anything fun lately?", "How was your week?")),
         (p, f"Mostly {ger}! I {past} {long} {t}.")],
        [(p, f"I spent {t} {ger} {long}, {pick('finally', 'at last', 'which was so relaxing')}.")],
        [(p, f"Guess what, I {past} {long} {t}!"),
         (o, pick("No way, send me a picture!", "That's amazing!", "You're so talented."))],
    )
    return turns, q, long


def fact_fix(c, p, g, o):
    obj = c.take(FIX_OBJECTS, "fix")
    if obj is None:
        return None
    short, syn = obj
    t = rng.choice(TIME_PHRASES)
    part = pick("chain", "hose", "belt", "hinge", "seal", "fan")
    q = pick(f"What did {p} fix on the {short}?", f"Which part of the {short} did {p} repair?",
             f"How did {p} fix the broken {short}?")
    word = pick(short, syn)
    turns = pick(
        [(p, f"{cap(t)} I repaired the {word} myself, it just needed a new {part}.")],
        [(p, f"The {word} broke again, so I replaced the {part} {t}. Works like new.")],
        [(o, "Did you get someone to look at it?"),
         (p, f"Nope, I fixed the {word} on my own. A new {part} and a YouTube video!")],
    )
    return turns, q, f"new {part}" if "new " + part in turns[-1][1] else part


def fact_pet(c, p, g, o):
    kind, small, big, breeds = rng.choice(BREEDS)
    if (("pet", p, kind)) in c.used:
        return None
    c.used.add(("pet", p, kind))
    breed = c.take(breeds, "breed")
    name = c.take(PET_NAMES, "petname")
    if breed is None or name is None:
        return None
    q = pick(f"What breed is {p}'s new {kind}?", f"What kind of {big} did {p} adopt?",
             f"What did {p} name {his(g)} {kind}?", f"What is the name of {p}'s {breed}?",
             f"What breed of {big} does {p} have?")
    turns = pick(
        [(p, f"We adopted a little {breed} {small}! We named {pick('her', 'him')} {name}.")],
        [(p, f"Big news: we brought home a {breed} {pick(kind, small)}. {pick('Her', 'His')} name is {name}."),
         (o, pick("Oh my gosh, so cute!", "I need to meet this little one!"))],
        [(o, "How's the new family member?"),
         (p, f"{name} is a handful! Typical {breed}, {pick('chews everything', 'that breed never sits still')}.")],
    )
    return turns, q, name


def fact_outing(c, p, g, o):
    base, ger, past, prep = rng.choice(OUTINGS)
    comp = rng.choice(COMPANIONS)
    if ("outing", p, base, comp[0]) in c.used:
        return None
    place = c.take(PLACES, "place")
    if place is None:
        return None
    c.used.add(("outing", p, base, comp[0]))
    t = rng.choice(TIME_PHRASES)
    q = pick(f"Where did {p} go {ger} with {his(g)} {comp[0]}?",
             f"Where did {p} {base} with {his(g)} {comp[0]}?",
             f"Who did {p} go {ger} with at {place}?",
             f"What did {p} do at {place} with {his(g)} {comp[0]}?")
    word = pick(comp[0], comp[1])
    turns = pick(
        [(p, f"My {word} and I {past} {place} {t}. {pick('Exhausting but worth it.', 'The views were unreal.', 'We got caught in the rain.')}")],
        [(o, "Did you do anything this weekend?"),
         (p, f"Went {ger} at {place} with my {word}. {pick('So much fun.', 'My legs are dead.')}")],
        [(p, f"{cap(t)} my {word} dragged me out to {place} and we {past.split()[0]} all day.")],
    )
    return turns, q, place


def fact_purchase(c, p, g, o):
    item = c.take(ITEMS, "item")
    if item is None:
        return None
    short, syn = item
    color = rng.choice(COLORS)
    shop = c.take(SHOPS, "shop")
    if shop is None:
        return None
    price = rng.choice([45, 80, 120, 150, 230, 340, 499, 650, 900, 1200])
    verb = rng.choice(BUY_PAST)
    word = pick(short, syn)
    kind = rng.randrange(3)
    if kind == 0:
        q = pick(f"What color is the {short} {p} bought?", f"What color is {p}'s new {short}?")
        turns = [(p, f"I {verb} a {color} {word}, {pick('love it', 'it really pops', 'my partner hates the color')}.")]
        uniq = f"{color} {word}"
    elif kind == 1:
        q = pick(f"Where did {p} buy {his(g)} new {short}?", f"Where did {p} find the {short}?")
        turns = [(p, f"I {verb} a {word} at {shop} for almost nothing!")]
        uniq = shop
    else:
        q = pick(f"How much did {p} pay for the {short}?", f"How much was {p}'s new {short}?")
        turns = [(o, "Did you end up getting it?"),
                 (p, f"Yes! I {verb} the {word}. {pick('It was', 'I paid', 'Paid')} ${price}, {pick('a steal', 'pricey but worth it', 'on sale')}.")]
        uniq = f"${price}"
    return turns, q, uniq


def fact_person(c, p, g, o):
    name = c.take(c.others, "person")
    if name is None:
        return None
    kind = rng.randrange(3)
    if kind == 0:
        if ("coworker", p) in c.used:
            return None
        c.used.add(("coworker", p))
        q = pick(f"What is the name of {p}'s new coworker?", f"Who is {p}'s new coworker?")
        turns = [(p, f"There's a new {pick('colleague', 'guy on my team', 'coworker', 'coworker')} {pick('named', 'called', 'at work,')} {name}. {pick('Really funny.', 'We get lunch together now.', 'Super smart.')}")]
        return turns, q, name
    if kind == 1:
        event = c.take(EVENTS, "event")
        if event is None:
            return None
        q = pick(f"Who did {p} meet at the {event}?", f"Who did {p} run into at the {event}?")
        turns = pick([(p, f"I met someone at the {event}, {name}. {pick('We hit it off.', 'Turns out we went to the same school.')}")],
                     [(p, f"At the {event} I bumped into {name}, haven't seen {pick('her', 'him')} in years!")])
        return turns, q, f"{event}"
    job = c.take(JOBS, "job")
    if job is None:
        return None
    q = pick(f"What does {p}'s friend {name} do for a living?", f"What is {name}'s job?",
             f"What does {name} work as?")
    turns = [(p, f"My friend {name} {pick('works as', 'is', 'just started as')} a {job}, {pick('crazy hours', 'loves it', 'always has stories')}.")]
    return turns, q, f"{name} "


def fact_wedding(c, p, g, o):
    rel = c.take(WEDDING_RELS, "wedding-" + p)
    if rel is None:
        return None
    month = rng.choice(MONTHS)
    day = rng.randint(1, 28)
    q = pick(f"When is {p}'s {rel}'s wedding?", f"When is {p}'s {rel} getting married?")
    turns = pick([(p, f"My {rel} is getting married on {month} {day}th! I'm a bridesmaid." if g == "f" else f"My {rel} is getting married on {month} {day}th! I'm giving a toast.")],
                 [(p, f"The {rel}'s wedding is set for {month} {day}, finally."),
                  (o, "Put me down for the cake tasting!")],
                 [(p, f"Save the date: {month} {day}. My {rel} and {pick('Jo', 'Alex', 'Chris', 'Pat')} are tying the knot.")])
    return turns, q, f"{month} {day}"


def fact_course(c, p, g, o):
    course = c.take(COURSES, "course")
    if course is None:
        return None
    key, phrase = course
    day = rng.choice(WEEKDAYS)
    clock = rng.choice(CLOCK)
    q = pick(f"When does {p}'s {phrase} class start?", f"What day is {p}'s {phrase} class?",
             f"What time are {p}'s {phrase} lessons?")
    turns = pick([(p, f"I signed up for {phrase} classes, {day}s at {clock}.")],
                 [(p, f"My {phrase} lessons start next {day}, {clock} sharp.")],
                 [(o, "Are you still doing that class?"), (p, f"Yes, {phrase}, every {day} at {clock}.")])
    return turns, q, f"{day}"


def fact_appointment(c, p, g, o):
    appt = c.take(APPOINTMENTS, "appt")
    if appt is None:
        return None
    full, syn = appt
    clock = rng.choice(CLOCK)
    day = rng.choice(WEEKDAYS)
    q = pick(f"What time is {p}'s {full}?", f"When is {p}'s {full}?")
    turns = pick([(p, f"My {pick(full, syn)} is at {clock} on {day}, wish me luck.")],
                 [(p, f"Can't do {day}, I have my {pick(full, syn)} at {clock}.")])
    return turns, q, f"{clock} on {day}" if "on " + day in turns[0][1] else f"{day}, I have my"


def fact_learning(c, p, g, o):
    kind = rng.randrange(2)
    if kind == 0:
        if ("instrument", p) in c.used:
            return None
        c.used.add(("instrument", p))
        inst = rng.choice(INSTRUMENTS)
        q = pick(f"What instrument is {p} learning?", f"Which instrument did {p} start learning?",
                 f"What instrument does {p} play?")
        turns = pick([(p, f"I started {pick('learning', 'taking')} {inst} lessons, my neighbors must hate me.")],
                     [(p, f"I've been learning the {inst}! Three weeks in.")],
                     [(o, "How's the music going?"), (p, f"Playing the {inst} is harder than it looks.")])
        return turns, q, inst
    if ("language", p) in c.used:
        return None
    c.used.add(("language", p))
    lang = rng.choice(LANGUAGES)
    q = pick(f"What language is {p} studying?", f"Which language is {p} learning?")
    turns = pick([(p, f"I'm learning {lang} before the trip, {pick('such a hard language', 'slowly')}.")],
                 [(p, f"I've been studying {lang} on my lunch breaks, slowly.")],
                 [(p, f"Every night I do twenty minutes of {lang} on a language app.")])
    return turns, q, lang


def fact_media(c, p, g, o):
    kind = rng.randrange(3)
    comp = rng.choice(COMPANIONS)
    if kind == 0:
        book = c.take(BOOKS, "book")
        if book is None:
            return None
        q = pick(f"What book did {p} read recently?", f"Which novel did {p} recommend?",
                 f"What book did {p} finish?", f"What was {p} reading?")
        turns = pick([(p, f"I just finished {book}, I'd recommend it.")],
                     [(p, f"I'm reading {book} right now, can't put it down.")],
                     [(o, "Any good books lately?"), (p, f"{book}. Read it in two days.")])
        return turns, q, book
    if kind == 1:
        movie = c.take(MOVIES, "movie")
        if movie is None or ("movie", p, comp[0]) in c.used:
            return None
        c.used.add(("movie", p, comp[0]))
        q = pick(f"Which movie did {p} watch with {his(g)} {comp[0]}?",
                 f"What film did {p} see with {his(g)} {comp[0]}?")
        turns = pick([(p, f"My {pick(*comp)} and I watched {movie}, {pick('so good', 'kind of a letdown', 'we cried')}.")],
                     [(p, f"Saw {movie} with my {pick(*comp)}. The ending!")])
        return turns, q, movie
    band = c.take(BANDS, "band")
    venue = rng.choice(VENUES)
    if band is None:
        return None
    q = pick(f"Which band did {p} see in concert?", f"What concert did {p} go to at {venue}?",
             f"Who did {p} see play live?")
    turns = pick([(p, f"We saw {band} live at {venue}, best concert ever.")],
                 [(p, f"The {band} concert at {venue} was incredible.")])
    return turns, q, band


def fact_family(c, p, g, o):
    kind = rng.randrange(4)
    fam = c.family[p]
    if kind == 0:
        rel = rng.choice(["brother", "sister", "parents", "cousin", "best friend"])
        if ("moved", p, rel) in c.used:
            return None
        city = c.take(CITIES, "city")
        if city is None:
            return None
        c.used.add(("moved", p, rel))
        q = pick(f"Where did {p}'s {rel} move?", f"Which city does {p}'s {rel} live in now?")
        turns = pick([(p, f"My {rel} {'have' if rel == 'parents' else 'has'} moved to {city}, I'll miss {'them' if rel == 'parents' else 'having them close'}.")],
                     [(p, f"My {rel} {'live' if rel == 'parents' else 'lives'} in {city} now, {pick('it is so far', 'I visit when I can')}.")],
                     [(p, f"My {rel} {'are' if rel == 'parents' else 'is'} relocating to {city} for work.")])
        return turns, q, city
    if kind == 1:
        rel = rng.choice(["mom", "dad", "partner", "grandma", "son", "daughter"])
        if ("bday-cook", p, rel) in c.used:
            return None
        dish = c.take(DISHES, "dish")
        if dish is None:
            return None
        c.used.add(("bday-cook", p, rel))
        q = pick(f"What did {p} cook for {his(g)} {rel}'s birthday?",
                 f"What dish did {p} make for {his(g)} {rel}'s birthday dinner?")
        turns = pick([(p, f"For my {rel}'s birthday I made {dish} from scratch.")],
                     [(p, f"I cooked {dish} for my {rel}'s birthday, everyone had seconds.")])
        return turns, q, dish
    if kind == 2:
        if ("sport", p) in c.used:
            return None
        c.used.add(("sport", p))
        sport = rng.choice(SPORTS)
        kid = fam["kid"]
        q = pick(f"What sport does {p}'s kid play?", f"Which team did {kid} join?",
                 f"What sport did {p}'s child sign up for?")
        turns = pick([(p, f"{kid} joined the {sport} team at school, {pick('first game Saturday', 'loves it')}.")],
                     [(p, f"{kid} has {sport} practice three times a week now.")])
        return turns, q, f"{kid} " + turns[0][1].split(kid, 1)[1][:12]
    place = c.take(VOLUNTEER, "volunteer")
    if place is None or ("volunteer", p) in c.used:
        return None
    c.used.add(("volunteer", p))
    q = pick(f"Where does {p} volunteer?", f"Where has {p} been volunteering?")
    turns = pick([(p, f"I volunteer at the {place} on weekends now.")],
                 [(p, f"Spent Saturday volunteering at the {place}, very rewarding.")],
                 [(p, f"I started helping out at the {place} twice a month.")])
    return turns, q, place


def fact_event(c, p, g, o):
    kind = rng.randrange(5)
    if kind == 0:
        prize = c.take(PRIZES, "prize")
        if prize is None:
            return None
        event, thing = prize
        q = pick(f"What did {p} win at the {event}?", f"What did {p} enter in the {event}?")
        turns = [(p, f"I won {pick('first prize', 'second place', 'a ribbon')} at the {event} with my {thing}!")]
        return turns, q, f"the {event}"
    if kind == 1:
        lost = c.take(LOST, "lost")
        place = c.take(LOST_PLACES, "lostplace")
        if lost is None or place is None:
            return None
        q = pick(f"Where did {p} lose {his(g)} {lost[0]}?", f"What did {p} lose at {place}?")
        turns = pick([(p, f"I lost my {lost[1]} at {place}, {pick('still annoyed', 'such a mess')}.")],
                     [(p, f"Left my {lost[1]} at {place}, never saw it again.")])
        return turns, q, place
    if kind == 2:
        if ("gift", p) in c.used:
            return None
        c.used.add(("gift", p))
        gift = c.take(GIFTS, "gift")
        giver = c.family[p]["partner"]
        if gift is None:
            return None
        q = pick(f"What did {p} get for {his(g)} birthday?", f"What birthday present did {p} receive?")
        turns = pick([(p, f"For my birthday {giver} gave me {gift}!")],
                     [(o, "Happy birthday again! What did you get?"), (p, f"{gift[0].upper() + gift[1:]}, from {giver}.")])
        return turns, q, gift
    if kind == 3:
        if ("trip", p) in c.used:
            return None
        c.used.add(("trip", p))
        trip = c.take(TRIPS, "trip")
        if trip is None:
            return None
        q = pick(f"Where is {p} going on vacation?", f"Where is {p} traveling this summer?",
                 f"What trip did {p} book?")
        turns = pick([(p, f"We booked a trip to {trip}! Leaving {pick('this summer', 'in June')}.")],
                     [(p, f"Our vacation this year is {trip}, I can't wait.")])
        return turns, q, trip
    if ("newjob", p) in c.used:
        return None
    c.used.add(("newjob", p))
    job = c.take(JOBS, "job")
    company = rng.choice(COMPANIES)
    if job is None:
        return None
    q = pick(f"What is {p}'s new job?", f"What job did {p} get?", f"Where is {p} working now?")
    turns = [(p, f"I got the job! I'll be {pick('a', 'working as a')} {job} at {company}.")]
    return turns, q, f"a {job} at"


def fact_food(c, p, g, o):
    city = c.take(CITIES, "city")
    dish = c.take(DISHES, "dish")
    if city is None or dish is None:
        return None
    q = pick(f"What was {p}'s favorite dish in {city}?", f"What did {p} eat in {city}?",
             f"What food did {p} love in {city}?")
    turns = pick([(p, f"The best thing I ate in {city} was the {dish}, hands down.")],
                 [(o, f"How was the food in {city}?"), (p, f"Amazing. I had {dish} three times.")])
    return turns, q, dish


MAKERS = [(fact_hobby, 5), (fact_outing, 4), (fact_purchase, 3), (fact_person, 3),
          (fact_pet, 1), (fact_fix, 1), (fact_wedding, 1), (fact_course, 1),
          (fact_appointment, 1), (fact_learning, 1), (fact_media, 2), (fact_family, 2),
          (fact_event, 2), (fact_food, 1)]
WEIGHTED = [m for m, w in MAKERS for _ in range(w)]

GREETINGS = ["Hey {o}! How have you been?", "Hi {o}, long time no talk!", "Morning {o}!",
             "{o}! Good to hear from you.", "Hey you, how was your week?", "Hi! Got a minute to catch up?"]
REPLIES = ["Pretty good, busy as always.", "Hanging in there!", "Great, thanks for asking.",
           "Tired, but good.", "Honestly, a bit of a chaotic week.", "Can't complain!"]
SMALL = [
    "Work has been crazy this week.", "The weather finally turned nice here.",
    "It's been raining nonstop.", "How are the kids doing?", "{kid} is doing great at school.",
    "{partner} says hi, by the way.", "I've been so tired lately.", "We should grab coffee soon.",
    "Did you do anything fun this weekend?", "Not much, just relaxing at home.",
    "I've been trying to get back into {hobby}.", "Have you been {hobby} lately?",
    "I love {hobby}, it clears my head.", "My {rel} called me yesterday, we talked for hours.",
    "Haha, that sounds like fun!", "That's amazing, I'm so happy for you!",
    "Oh no, I'm sorry to hear that.", "Same here, honestly.", "I know, right?",
    "{partner} and I finally had a date night.", "The house is a mess, as usual.",
    "I need a vacation so badly.", "Did I tell you about my {rel}?", "My boss is driving me nuts.",
    "We had a lovely family dinner on Sunday.", "The garden is a jungle right now.",
    "I've been meaning to call you all week.", "Traffic was awful this morning.",
    "{kid} has a cold again, poor thing.", "I keep thinking about that trip we took.",
    "I made way too much coffee today.", "Have you watched anything good lately?",
    "I'm trying to read more this year.", "We're thinking about repainting the kitchen.",
    "My {rel} wants to visit next month.", "That reminds me of our college days.",
    "I finally cleaned out the garage.", "Work is slowly getting better.",
    "I went for a long walk to clear my head.", "We're saving up for a new car.",
    "I can't believe how fast this year is going.", "It was {partner}'s idea, of course.",
    "You always know how to cheer me up.", "Tell me everything!", "Wow, really?",
    "I'm so proud of you.", "What a week it has been.", "I'll send you some pictures later.",
    "My back is killing me from gardening.", "The kids want a pet so badly.",
    "I think I'm finally getting the hang of it.", "Let's plan something for next month.",
]
GOODBYES = ["Talk soon!", "Take care, {o}!", "Okay, gotta run. Bye!", "Love you, talk later.",
            "Catch you next week!", "Night, {o}!"]
RELS = ["mom", "dad", "sister", "brother", "cousin", "grandma", "aunt", "best friend"]


# Life events that recur across a conversation's sessions (each speaker has two).
THREADS = [
    ["The kitchen renovation is dragging on forever.", "The contractor didn't show up again.",
     "We picked tiles for the kitchen, finally.", "Still no sink, we're washing dishes in the tub."],
    ["Training for the marathon is going okay.", "Did a long run this morning, my knees hurt.",
     "Only a few weeks until the race.", "I bought new running gear for the marathon training."],
    ["The job hunt is exhausting.", "Had another interview, fingers crossed.",
     "Still waiting to hear back about that job.", "I rewrote my resume again."],
    ["Grandma is back in the hospital.", "Visited grandma today, she seemed better.",
     "The doctors say grandma needs more rest.", "Grandma asked about you!"],
    ["Wedding planning is taking over my life.", "We still haven't picked a venue for the wedding.",
     "The guest list keeps growing.", "We tasted wedding cakes this week, so many options."],
    ["The new puppy chewed my shoes again.", "Puppy training classes are paying off.",
     "The dog woke us up at five again.", "Walking the dog in the rain is no fun."],
    ["The baby isn't sleeping through the night yet.", "The baby said her first word!",
     "Daycare starts next month.", "We're running on three hours of sleep."],
    ["We're house hunting again.", "Saw a cute house but it needs a new roof.",
     "Our offer on the house got rejected.", "The mortgage stuff is so confusing."],
    ["I'm trying to eat healthier this month.", "Meal prepping every Sunday now.",
     "Gave up sugar for a month, it's rough.", "I've been going to the gym before work."],
    ["My sister is staying with us for a while.", "My sister found an apartment, finally.",
     "My sister and I had a big fight.", "Helped my sister move her stuff this weekend."],
    ["Night classes are wearing me out.", "Got a good grade on my exam!",
     "Only one more semester to go.", "Studying every night after work."],
    ["The garden is finally producing vegetables.", "Slugs ate half my lettuce.",
     "We have way too many zucchinis.", "Spent the evening weeding the garden."],
]


def filler(c, speaker):
    if rng.random() < 0.35:
        return rng.choice(rng.choice(c.threads[speaker]))
    s = rng.choice(SMALL)
    fam = c.family[speaker]
    return s.format(kid=fam["kid"], partner=fam["partner"], hobby=rng.choice(HOBBY_GERUNDS),
                    rel=rng.choice(RELS))


def session(c, number, day):
    """The lines of one session file and its (question, unique phrase) pairs."""
    names = [s[0] for s in c.speakers]
    first = rng.choice(names)
    second = names[1] if first == names[0] else names[0]
    blocks = [[(first, rng.choice(GREETINGS).format(o=second))],
              [(second, rng.choice(REPLIES))]]
    facts = []
    wanted = rng.randint(4, 6)
    tries = 0
    while len(facts) < wanted and tries < 200:
        tries += 1
        speaker = rng.choice(c.speakers)
        made = rng.choice(WEIGHTED)(c, speaker[0], speaker[1], c.other(speaker[0])[0])
        if made is None:
            continue
        turns, question, unique = made
        facts.append((turns, question, unique))
    total = rng.randint(15, 40)
    body = [t for f in facts for t in f[0]]
    middle = [[None] for _ in range(max(0, total - 3 - len(body)))]
    for f in facts:
        middle.insert(rng.randrange(len(middle) + 1), f[0])
    lines = [f"# Session {number} — {day.isoformat()}", ""]
    turn = 0
    for block in blocks + middle:
        for speaker, text in block if block != [None] else [(None, None)]:
            if speaker is None:
                speaker = names[turn % 2]
                text = filler(c, speaker)
            lines.append(f"{speaker}: {text}")
            turn += 1
    last = names[turn % 2]
    lines.append(f"{last}: {rng.choice(GOODBYES).format(o=c.other(last)[0])}")
    return lines, [(q, u) for _, q, u in facts]


def content_words(question):
    words = re.findall(r"[a-z0-9]+(?:['’][a-z]+)?", question.lower())
    out = []
    for w in words:
        w = re.sub(r"['’]s$", "", w)
        if w not in STOP:
            out.append(w)
    return " ".join(out)


def main():
    if os.path.isdir(OUT):
        shutil.rmtree(OUT)
    os.makedirs(OUT)
    names = SPEAKERS[:]
    rng.shuffle(names)
    people = PEOPLE[:]
    rng.shuffle(people)
    questions = []
    for i in range(CONVERSATIONS):
        conv_people = people[i * 12:(i + 1) * 12]
        c = Conversation(i + 1, names[2 * i], names[2 * i + 1], conv_people)
        folder = f"conv{i + 1:02d}"
        os.makedirs(os.path.join(OUT, folder))
        day = date(2022, 1, 1) + timedelta(days=rng.randrange(700))
        texts = {}
        pending = []
        for s in range(1, SESSIONS + 1):
            day += timedelta(days=rng.randint(3, 16))
            lines, qs = session(c, s, day)
            name = f"{folder}/session_{s:02d}.md"
            texts[name] = "\n".join(lines) + "\n"
            pending += [(q, u, name) for q, u in qs]
        for name, text in texts.items():
            with open(os.path.join(OUT, name), "w", encoding="utf-8", newline="\n") as f:
                f.write(text)
        seen_questions = set()
        for q, unique, name in pending:
            holders = [n for n, t in texts.items() if unique.lower() in t.lower()]
            if holders != [name] or q in seen_questions:
                continue  # not unique to its file in this conversation: no question
            seen_questions.add(q)
            questions.append({"id": f"q{len(questions) + 1:04d}", "conversation": folder,
                              "question": q, "content_words": content_words(q),
                              "answer_file": name})
    # A question text asked of two conversations' files would be ambiguous in the whole store.
    counts = {}
    for q in questions:
        counts[q["question"]] = counts.get(q["question"], 0) + 1
    questions = [q for q in questions if counts[q["question"]] == 1]
    for n, q in enumerate(questions, 1):
        q["id"] = f"q{n:04d}"
    with open(os.path.join(OUT, "questions.jsonl"), "w", encoding="utf-8", newline="\n") as f:
        for q in questions:
            f.write(json.dumps(q, ensure_ascii=False) + "\n")
    print(f"{CONVERSATIONS * SESSIONS} session files, {len(questions)} questions in {OUT}")


if __name__ == "__main__":
    main()
