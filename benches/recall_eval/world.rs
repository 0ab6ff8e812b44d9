//! The generated evaluation set: multi-session dated conversations between two people, with
//! facts planted in them and natural-language questions whose evidence turns are annotated.
//!
//! Deterministic (a fixed-seed SplitMix64). Three kinds of question:
//! - `paraphrase`: the question says what one turn says, in other words ("What kind of dog did
//!   Maya get?" for "I finally adopted a beagle from the animal rescue").
//! - `multi-hop`: the answer needs two turns from different sessions joined by a name the
//!   question does not say ("What job does Maya's brother who moved to Denver have?": "my brother
//!   Theo moved to Denver" + weeks later "Theo started as a nurse").
//! - `temporal`: "when" questions answered by the date of the session a turn is in, and "in
//!   <month year>" questions where the same topic comes up in several months.
//!
//! Every fact has lexical distractors: other turns that share the question's words.

pub struct Turn {
    pub date: String,
    pub text: String,
}

pub struct Question {
    pub kind: &'static str,
    pub text: String,
    pub evidence: Vec<usize>,
}

pub struct Conversation {
    pub turns: Vec<Turn>,
    pub questions: Vec<Question>,
}

/// A turn planned for a session: speaker (0 or 1), text, and (question, evidence slot) when it is
/// a question's evidence.
type Planted = (usize, String, Option<(usize, usize)>);

pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    pub fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }
}

const NAMES: &[&str] = &[
    "Maya", "Jon", "Priya", "Lucas", "Aiko", "Omar", "Grace", "Diego", "Lena", "Sam", "Nora",
    "Felix", "Ines", "Kwame", "Rosa", "Ivan", "Hana", "Tariq", "Elena", "Ben", "Zoe", "Marco",
    "Yuki", "Chloe",
];
const OTHER_NAMES: &[&str] = &[
    "Theo", "Clara", "Rafael", "Mina", "Oskar", "Leila", "Dmitri", "Sofia", "Hugo", "Amara",
    "Pavel", "Nadia", "Emil", "Vera", "Tobias", "Iris",
];
/// The month names the generated dates are written with (and the questions name).
pub const MONTHS: &[&str] = &[
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];

/// Chit-chat that fills the sessions; slots give variety and shared words give BM25 noise.
const FILLER: &[&str] = &[
    "Honestly the week flew by, work was busy and I barely had time to {act}.",
    "Did you end up trying that {food} place downtown? I heard the {food} is great.",
    "I spent most of Saturday {acting} and it was so relaxing.",
    "The weather has been {weather} all week, I can't wait for it to change.",
    "My {rel} called yesterday and we talked for almost an hour about {topic}.",
    "I've been thinking a lot about {topic} lately, it's been on my mind.",
    "That sounds amazing! How did you feel about it afterwards?",
    "Ha, that reminds me of the time we got lost on the way to the {place}.",
    "I'm so tired today, I stayed up late watching a show about {topic}.",
    "We should plan something fun for next month, maybe a trip to the {place}?",
    "Work is okay, my manager keeps asking for updates on the {project} project.",
    "I picked up some {food} on the way home, it was the highlight of my day.",
    "Thanks for asking! Things are good, just busy with {topic} and family stuff.",
    "Oh no, I'm sorry to hear that. Is everything alright now?",
    "I tried {acting} for the first time in years and I'm sore everywhere.",
    "My {rel} has been helping me with {topic}, which is really kind.",
    "We watched a documentary about the {place} and now I really want to visit.",
    "I keep meaning to call you back, the {project} deadline ate my whole week.",
    "Not much new here, mostly {acting} in the evenings and sleeping early.",
    "That's wonderful news, congratulations! You really deserve it.",
    "The kids were noisy all weekend, we ended up going to the {place} to tire them out.",
    "I read an article about {topic} and it changed how I think about it.",
    "Traffic was terrible this morning, it took me an hour to get to the office.",
    "I'm trying to be better about {topic}, but it's harder than I thought.",
    "We had friends over for dinner and I made {food}, everyone liked it.",
    "Do you still go {acting} on Sundays? I might join you sometime.",
];
const ACT: &[&str] = &[
    "read", "cook", "exercise", "garden", "paint", "relax", "clean", "sleep",
];
const ACTING: &[&str] = &[
    "hiking",
    "baking",
    "swimming",
    "gardening",
    "painting",
    "cycling",
    "knitting",
    "climbing",
    "fishing",
    "dancing",
];
const FOOD: &[&str] = &[
    "ramen",
    "pizza",
    "curry",
    "tacos",
    "sushi",
    "dumplings",
    "pho",
    "pasta",
];
const WEATHER: &[&str] = &["rainy", "freezing", "humid", "windy", "gloomy", "scorching"];
const REL: &[&str] = &[
    "mom", "dad", "sister", "brother", "aunt", "cousin", "grandpa", "uncle",
];
const TOPIC: &[&str] = &[
    "money",
    "health",
    "career",
    "moving",
    "school",
    "travel",
    "friendship",
    "politics",
    "retirement",
    "the garden",
    "sleep",
    "cooking",
    "music",
    "the car",
];
const PLACE: &[&str] = &[
    "beach",
    "lake",
    "mountains",
    "museum",
    "zoo",
    "aquarium",
    "market",
    "park",
];
const PROJECT: &[&str] = &[
    "billing",
    "migration",
    "dashboard",
    "onboarding",
    "audit",
    "launch",
];

fn fill(rng: &mut Rng, template: &str) -> String {
    let mut out = template.to_string();
    for (slot, list) in [
        ("{act}", ACT),
        ("{acting}", ACTING),
        ("{food}", FOOD),
        ("{weather}", WEATHER),
        ("{rel}", REL),
        ("{topic}", TOPIC),
        ("{place}", PLACE),
        ("{project}", PROJECT),
    ] {
        while let Some(at) = out.find(slot) {
            let value = rng.pick(list);
            out.replace_range(at..at + slot.len(), value);
        }
    }
    out
}

/// A paraphrase fact: what the speaker says, the question asked about it (`{s}` is the speaker),
/// and distractors that share the question's words but not its answer. `{x}` is a slot value.
struct Paraphrase {
    says: &'static str,
    asks: &'static str,
    distractors: &'static [&'static str],
    values: &'static [&'static str],
}

const PARAPHRASES: &[Paraphrase] = &[
    Paraphrase {
        says: "I finally adopted a little {x} from the animal rescue last weekend!",
        asks: "What kind of dog did {s} get?",
        distractors: &[
            "The neighbour's dog barked all night, I got no sleep.",
            "Did you get the dog food coupons I sent?",
        ],
        values: &["beagle", "corgi", "poodle", "labrador", "husky"],
    },
    Paraphrase {
        says: "The physician says I tore a ligament and have to stay off my leg for six weeks.",
        asks: "What injury did {s} suffer?",
        distractors: &[
            "Did you suffer through that long meeting too?",
            "What did you think of the injury report on the news?",
        ],
        values: &[""],
    },
    Paraphrase {
        says: "We signed the lease on a tiny flat right next to the {x}.",
        asks: "Where is {s}'s new home?",
        distractors: &[
            "I'm home now, finally, what a day.",
            "Is the new phone any good?",
        ],
        values: &[
            "harbour",
            "stadium",
            "university",
            "train station",
            "old cathedral",
        ],
    },
    Paraphrase {
        says: "I've been taking {x} lessons every Tuesday evening with an old teacher.",
        asks: "What musical instrument is {s} learning?",
        distractors: &[
            "Learning to drive stick is harder than I expected.",
            "That musical we saw was way too long.",
        ],
        values: &["cello", "violin", "piano", "trumpet", "banjo"],
    },
    Paraphrase {
        says: "Bad news, they let me go from the warehouse on Friday, half the team is out.",
        asks: "What happened to {s}'s employment?",
        distractors: &[
            "What happened with the broken dishwasher?",
            "My employment contract renewal is next year.",
        ],
        values: &[""],
    },
    Paraphrase {
        says: "We booked the flights for our honeymoon in {x}!",
        asks: "Where is {s} travelling after the wedding?",
        distractors: &[
            "The wedding cake tasting was so much fun.",
            "Travelling for work is exhausting.",
        ],
        values: &["Portugal", "Vietnam", "Iceland", "Peru", "Greece"],
    },
    Paraphrase {
        says:
            "I started helping out at the soup kitchen on weekends, serving meals to the homeless.",
        asks: "What charity work does {s} do?",
        distractors: &[
            "Do you do any work from home?",
            "The charity run raised a lot this year.",
        ],
        values: &[""],
    },
    Paraphrase {
        says: "My grandmother passed away peacefully in her sleep on Tuesday.",
        asks: "Did someone in {s}'s family die?",
        distractors: &[
            "My family is coming over for the holidays.",
            "The battery died on the highway.",
        ],
        values: &[""],
    },
    Paraphrase {
        says: "I can't put down {x}, I stay up way too late turning pages.",
        asks: "What novel is {s} into lately?",
        distractors: &[
            "Lately I've been into board games.",
            "What's new with you lately?",
        ],
        values: &[
            "The Remains of the Day",
            "Dune",
            "Middlemarch",
            "The Road",
            "Beloved",
        ],
    },
    Paraphrase {
        says: "We bought a second-hand {x} with really low mileage.",
        asks: "What vehicle did {s} purchase?",
        distractors: &[
            "Did you purchase the tickets yet?",
            "The vehicle inspection line was huge.",
        ],
        values: &[
            "Subaru wagon",
            "Honda minivan",
            "Ford pickup",
            "Toyota hatchback",
            "Volvo estate",
        ],
    },
    Paraphrase {
        says: "Passed my road test on the second attempt, the examiner was so strict.",
        asks: "Did {s} get a driving licence?",
        distractors: &[
            "Did you get my message about the licence plate?",
            "Driving in the snow terrifies me.",
        ],
        values: &[""],
    },
    Paraphrase {
        says: "My son fell off the trampoline and fractured his wrist.",
        asks: "How did {s}'s child get hurt?",
        distractors: &[
            "My child keeps asking how planes fly.",
            "It hurt my feelings when she didn't call.",
        ],
        values: &[""],
    },
    Paraphrase {
        says: "I cut out all animal products a month ago, feeling great so far.",
        asks: "Does {s} eat meat?",
        distractors: &[
            "Do you want to eat out Friday?",
            "We should meet at the usual place.",
        ],
        values: &[""],
    },
    Paraphrase {
        says: "The storm left two feet of water in our basement, the boiler is ruined.",
        asks: "What water damage did {s}'s house have?",
        distractors: &[
            "Drink more water, it helps with headaches.",
            "The house across the street is for sale.",
        ],
        values: &[""],
    },
    Paraphrase {
        says: "I enrolled in an evening course on {x} at the community college.",
        asks: "What is {s} studying?",
        distractors: &[
            "The study says coffee is fine in moderation.",
            "My studying days are long over.",
        ],
        values: &[
            "accounting",
            "astronomy",
            "Spanish",
            "pottery",
            "web design",
        ],
    },
    Paraphrase {
        says: "The landlord bumped what we owe each month by two hundred bucks.",
        asks: "How much more does {s} pay for rent?",
        distractors: &[
            "How much more snow are we getting?",
            "I pay for the streaming service, you pay for groceries.",
        ],
        values: &[""],
    },
    Paraphrase {
        says: "I jog five kilometres every single morning before breakfast now.",
        asks: "What exercise routine does {s} follow?",
        distractors: &[
            "The fire drill routine at work is a joke.",
            "Did you follow the recipe I sent?",
        ],
        values: &[""],
    },
    Paraphrase {
        says: "My daughter got her acceptance letter from {x}!",
        asks: "Which university will {s}'s kid attend?",
        distractors: &[
            "Will you attend the reunion?",
            "My kid drew a picture of a rocket.",
        ],
        values: &["Edinburgh", "McGill", "Stanford", "Kyoto", "Melbourne"],
    },
    Paraphrase {
        says: "We're expecting our first baby, the due date is in {x}.",
        asks: "When is {s} having a child?",
        distractors: &[
            "When is the next holiday weekend?",
            "My friend's child started school.",
        ],
        values: &["April", "July", "October", "December", "February"],
    },
    Paraphrase {
        says: "My doctor put me on pills for my blood pressure.",
        asks: "What medication is {s} taking?",
        distractors: &[
            "Are you taking the train or the bus?",
            "The medication ads on TV are so weird.",
        ],
        values: &[""],
    },
];

/// A multi-hop fact: two statements joined by a person's name `{p}`, the second in a later
/// session, and a question that does not name `{p}`.
struct MultiHop {
    first: &'static str,
    second: &'static str,
    asks: &'static str,
    values: &'static [&'static str],
}

const MULTI_HOPS: &[MultiHop] = &[
    MultiHop {
        first: "My brother {p} just moved to {x}, he loves it there.",
        second: "{p} started working night shifts as a nurse.",
        asks: "What job does {s}'s brother who moved to {x} have?",
        values: &["Denver", "Lisbon", "Osaka", "Nairobi", "Toronto"],
    },
    MultiHop {
        first: "{p} gave me a gorgeous {x} for my birthday.",
        second: "I'm devastated, I left {p}'s gift on the bus and never got it back.",
        asks: "What happened to the {x} {s} got for their birthday?",
        values: &["silver watch", "leather journal", "wool scarf", "camera"],
    },
    MultiHop {
        first: "My coworker {p} keeps telling me to read {x}.",
        second: "Finally gave in and read the book {p} recommended, the ending made me cry.",
        asks: "What did {s} think of {x}?",
        values: &["Stoner", "Piranesi", "Gilead", "Normal People"],
    },
    MultiHop {
        first: "We hired {p} to redo our {x}.",
        second: "{p} finished installing the new cabinets and tiles, it looks incredible.",
        asks: "How did the {x} renovation turn out for {s}?",
        values: &["kitchen", "bathroom", "laundry room"],
    },
    MultiHop {
        first: "My best friend {p} signed up for the {x} marathon.",
        second: "{p} crossed the finish line in just under four hours!",
        asks: "How did {s}'s friend do in the {x} marathon?",
        values: &["Boston", "Berlin", "Chicago", "Tokyo"],
    },
    MultiHop {
        first: "Our new neighbour {p} is a {x}, she told us at the barbecue.",
        second: "{p} helped us fix the leaking pipe under the sink yesterday.",
        asks: "What did {s}'s neighbour who is a {x} help with?",
        values: &["plumber", "retired engineer", "handywoman"],
    },
];

/// A temporal fact: said with a relative time in a dated session; asked with "when".
const WHENS: &[(&str, &str)] = &[
    (
        "I ran my first half marathon yesterday, my legs are jelly.",
        "When did {s} complete a 21 km race?",
    ),
    (
        "We got engaged last weekend on the pier at sunset!",
        "When did {s}'s partner propose?",
    ),
    (
        "I had my wisdom teeth pulled this morning, ouch.",
        "When did {s} have dental surgery?",
    ),
    (
        "Our band played its first real gig yesterday at a bar downtown.",
        "When did {s}'s band perform live for the first time?",
    ),
    (
        "I finally quit smoking last Monday, wish me luck.",
        "When did {s} give up cigarettes?",
    ),
    (
        "We moved into the new house over the weekend, boxes everywhere.",
        "When did {s} relocate to another home?",
    ),
];

/// A recurring topic with a different value each time; asked "in <month year>".
const RECURRING: &[(&str, &str)] = &[
    (
        "I'm hooked on a podcast called {x} right now.",
        "What audio show was {s} hooked on in {m}?",
    ),
    (
        "This month's pottery project is a {x}.",
        "What was {s} throwing on the wheel in {m}?",
    ),
];
const RECURRING_VALUES: &[&str] = &[
    "Deep Time",
    "Night Shift",
    "the Long Walk",
    "Small Hours",
    "Tidewater",
    "vase",
    "teapot",
    "fruit bowl",
    "lamp base",
];

fn say(speaker: &str, text: &str) -> String {
    format!("{speaker}: {text}")
}

pub fn generate(seed: u64, conversations: usize) -> Vec<Conversation> {
    let mut rng = Rng::new(seed);
    (0..conversations)
        .map(|c| conversation(&mut rng, c))
        .collect()
}

fn conversation(rng: &mut Rng, index: usize) -> Conversation {
    let a = NAMES[(index * 2) % NAMES.len()];
    let b = NAMES[(index * 2 + 1) % NAMES.len()];
    let sessions = 22 + rng.below(8);
    // Session dates: start in 2022-2023, 1-3 weeks apart (days since 2022-01-01 kept simple:
    // 28-day months of a calendar used only for names).
    let mut day = rng.below(300);
    let mut dates = Vec::new();
    for _ in 0..sessions {
        dates.push(day);
        day += 7 + rng.below(15);
    }
    let date_name = |d: usize| {
        let year = 2022 + d / 336;
        let month = (d % 336) / 28;
        let dom = d % 28 + 1;
        (
            format!("{dom} {} {year}", MONTHS[month]),
            format!("{} {year}", MONTHS[month]),
        )
    };
    // Planned turns per session: (speaker index, text, question id to attach as evidence).
    let mut planned: Vec<Vec<Planted>> = vec![Vec::new(); sessions];
    let mut questions: Vec<(Question, usize)> = Vec::new(); // (question, number of evidence slots)
    let plant = |planned: &mut Vec<Vec<Planted>>,
                 session: usize,
                 who: usize,
                 text: String,
                 q: Option<(usize, usize)>| {
        planned[session].push((who, text, q));
    };

    let mut order: Vec<usize> = (0..PARAPHRASES.len()).collect();
    shuffle(rng, &mut order);
    for &p in order.iter().take(13) {
        let fact = &PARAPHRASES[p];
        let who = rng.below(2);
        let speaker = if who == 0 { a } else { b };
        let value = rng.pick(fact.values);
        let q = questions.len();
        questions.push((
            Question {
                kind: "paraphrase",
                text: fact.asks.replace("{s}", speaker),
                evidence: Vec::new(),
            },
            1,
        ));
        let session = rng.below(sessions);
        plant(
            &mut planned,
            session,
            who,
            fact.says.replace("{x}", value),
            Some((q, 0)),
        );
        for d in fact.distractors {
            let s = rng.below(sessions);
            plant(&mut planned, s, rng.below(2), d.to_string(), None);
        }
    }
    let mut order: Vec<usize> = (0..MULTI_HOPS.len()).collect();
    shuffle(rng, &mut order);
    let mut people: Vec<&str> = OTHER_NAMES.to_vec();
    shuffle(rng, &mut people);
    for (n, &m) in order.iter().take(5).enumerate() {
        let fact = &MULTI_HOPS[m];
        let who = rng.below(2);
        let speaker = if who == 0 { a } else { b };
        let value = rng.pick(fact.values);
        let person = people[n];
        let q = questions.len();
        questions.push((
            Question {
                kind: "multi-hop",
                text: fact.asks.replace("{s}", speaker).replace("{x}", value),
                evidence: Vec::new(),
            },
            2,
        ));
        let first = rng.below(sessions / 2);
        let second = first + 3 + rng.below(sessions - first - 3);
        plant(
            &mut planned,
            first,
            who,
            fact.first.replace("{p}", person).replace("{x}", value),
            Some((q, 0)),
        );
        plant(
            &mut planned,
            second,
            who,
            fact.second.replace("{p}", person).replace("{x}", value),
            Some((q, 1)),
        );
        // The bridging name comes up elsewhere too, as it would.
        let s = rng.below(sessions);
        plant(
            &mut planned,
            s,
            1 - who,
            format!("Say hi to {person} from me!"),
            None,
        );
    }
    let mut order: Vec<usize> = (0..WHENS.len()).collect();
    shuffle(rng, &mut order);
    for &w in order.iter().take(5) {
        let (says, asks) = WHENS[w];
        let who = rng.below(2);
        let speaker = if who == 0 { a } else { b };
        let q = questions.len();
        questions.push((
            Question {
                kind: "temporal",
                text: asks.replace("{s}", speaker),
                evidence: Vec::new(),
            },
            1,
        ));
        plant(
            &mut planned,
            rng.below(sessions),
            who,
            says.to_string(),
            Some((q, 0)),
        );
    }
    for &(says, asks) in RECURRING {
        let who = rng.below(2);
        let speaker = if who == 0 { a } else { b };
        // The topic comes up in four sessions of different months; one of them is asked about.
        let mut picked: Vec<usize> = Vec::new();
        let mut tries = 0;
        while picked.len() < 4 && tries < 200 {
            tries += 1;
            let s = rng.below(sessions);
            if picked
                .iter()
                .all(|p| date_name(dates[*p]).1 != date_name(dates[s]).1)
            {
                picked.push(s);
            }
        }
        let asked = picked[rng.below(picked.len())];
        let q = questions.len();
        questions.push((
            Question {
                kind: "temporal",
                text: asks
                    .replace("{s}", speaker)
                    .replace("{m}", &date_name(dates[asked]).1),
                evidence: Vec::new(),
            },
            1,
        ));
        for &s in &picked {
            let value = rng.pick(RECURRING_VALUES);
            plant(
                &mut planned,
                s,
                who,
                says.replace("{x}", value),
                if s == asked { Some((q, 0)) } else { None },
            );
        }
    }

    // Lay out the sessions: filler turns alternating speakers, planted turns at random places,
    // each planted statement followed by a short reply.
    let mut turns = Vec::new();
    let mut evidence: Vec<Vec<usize>> = questions
        .iter()
        .map(|(_, n)| vec![usize::MAX; *n])
        .collect();
    for (session, plants) in planned.into_iter().enumerate() {
        let (date, _) = date_name(dates[session]);
        let length = 24 + rng.below(14);
        let mut slots: Vec<Option<Planted>> = (0..length).map(|_| None).collect();
        for p in plants {
            let at = rng.below(slots.len() + 1);
            slots.insert(at, Some(p));
        }
        for (i, slot) in slots.into_iter().enumerate() {
            match slot {
                None => {
                    let template = rng.pick(FILLER);
                    let text = fill(rng, template);
                    turns.push(Turn {
                        date: date.clone(),
                        text: say(if i % 2 == 0 { a } else { b }, &text),
                    });
                }
                Some((who, text, q)) => {
                    let speaker = if who == 0 { a } else { b };
                    if let Some((q, slot)) = q {
                        evidence[q][slot] = turns.len();
                    }
                    turns.push(Turn {
                        date: date.clone(),
                        text: say(speaker, &text),
                    });
                    let reply = rng.pick(&[
                        "Wow, really?",
                        "Oh, tell me more!",
                        "That's a lot to take in.",
                        "No way!",
                        "How are you feeling about it?",
                    ]);
                    turns.push(Turn {
                        date: date.clone(),
                        text: say(if who == 0 { b } else { a }, reply),
                    });
                }
            }
        }
    }
    let questions = questions
        .into_iter()
        .zip(evidence)
        .map(|((mut q, _), e)| {
            q.evidence = e;
            q
        })
        .collect();
    Conversation { turns, questions }
}

fn shuffle<T>(rng: &mut Rng, items: &mut [T]) {
    for i in (1..items.len()).rev() {
        let j = rng.below(i + 1);
        items.swap(i, j);
    }
}
